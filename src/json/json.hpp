#pragma once
/// Small helpers over Boost.JSON, hearth's one JSON DOM.

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace hearth::json {

using namespace boost::json;  // NOLINT(google-build-using-namespace): json::value, json::object,
                              // ...

/// Limits applied while parsing untrusted text.
struct ParseLimits {
  std::size_t max_depth = 64;
  /// Instead of refusing a number beyond a double, hold the largest finite double of its sign
  /// (files whose authors write 1e400 for "no limit"; the value stays valid JSON when written).
  bool clamp_numbers = false;
};

/// Parses untrusted JSON text. On failure the error is kParseError with the position in `data`.
/// A number that no 64-bit integer or finite double holds exactly as written (`1e400`, a
/// 30-digit integer) is a parse error too: it would otherwise come back changed, or as
/// `Infinity`, which is not JSON.
Result<value> parse_text(std::string_view text, ParseLimits limits = {});

/// A number of a JSON-RPC message that the DOM cannot carry as written, or the text of an `id`.
struct RawNumber {
  static constexpr std::size_t kNoElement = static_cast<std::size_t>(-1);
  /// Index in a top-level array (a batch), or kNoElement for a single message.
  std::size_t element = kNoElement;
  /// The message member it sits in ("id", "params", ...), empty for none.
  std::string member;
  /// True when the number is that member's value itself, not nested inside it.
  bool direct = false;
  /// True when the DOM holds a different number (out of range, or precision lost).
  bool out_of_range = false;
  /// The number exactly as written.
  std::string text;
};

/// Parses a JSON-RPC message (a request or a batch) leniently about numbers: an out-of-range
/// number becomes the nearest double in the DOM and is listed in `raw` with where it sat, so the
/// dispatcher can refuse it (-32602) with the message's id. Every number that is directly an
/// `id` and whose serialisation could differ from its text (any non-integer form) is listed
/// too, so that ids are echoed exactly.
Result<value> parse_message(std::string_view text, ParseLimits limits, std::vector<RawNumber>& raw);

// hearth's JSON writer. Every JSON text hearth writes (JSON-RPC answers and notifications, renders,
// transcripts, logs, files, the CLI's output) comes from here: `json::serialize(v)` finds these
// overloads before Boost.JSON's (qualified lookup stops at a name declared in this namespace), so
// write `json::serialize`, never `boost::json::serialize` or `os << v`.
//
// The text is compact and Boost.JSON's except for doubles. Strings are escaped as Boost.JSON
// 1.81 does: `"` and `\` with a backslash, \b \f \n \r \t, other control characters as
// \u00xx (lower-case hex); everything else, DEL and non-ASCII bytes included, as it is. Integers
// (int64, uint64) as decimal digits. A double is written as JavaScript's JSON.stringify writes it
// (ECMA-262 Number::toString), with the shortest digits that read back to the same double
// (std::to_chars): 42.5, 0.30000000000000004, 100 (an integral value has no fraction),
// 0.000001, 1e-7, 1e+21, 5e-324, 1.7976931348623157e+308; -0.0 as 0 (as JavaScript; Boost.JSON
// reads "-0" as the integer 0 anyway). Two differences from JavaScript: from 2^53 on (where a
// double no longer holds every integer) a number is written with an exponent, 1e+16 and
// 9.007199254740992e+15 where JavaScript writes up to 21 digits, so that it reads back as the same
// double and not as a 64-bit integer (json::canonical writes a double and an integer of one
// value alike only below 2^53, and parse_text refuses integers beyond 64 bits); and NaN and the
// infinities, which parse_text never produces, are written as null.
std::string serialize(const value& v);
std::string serialize(const object& o);
std::string serialize(const array& a);
std::string serialize(const string& s);
/// `s` as a JSON string.
std::string serialize(string_view s);

/// Appends what serialize(v) returns to `out`.
void serialize_to(std::string& out, const value& v);
/// Appends `s` as a JSON string to `out`.
void serialize_string_to(std::string& out, string_view s);
/// Appends the JSON text of `d` (see above) to `out`.
void serialize_number_to(std::string& out, double d);

/// Compact serialisation: serialize(v).
std::string dump(const value& v);

/// The canonical form: compact, object keys sorted (by their UTF-8 bytes), integral numbers
/// written as integers (1.0 as 1) and other numbers in their shortest round-trip form, strings
/// escaped only where JSON requires (", \, control characters; other text as UTF-8). Equal
/// values give equal strings; A2S checksums are SHA-256 over it (docs/a2s.md).
std::string canonical(const value& v);

/// "null", "boolean", "integer", "number", "string", "array" or "object".
std::string_view kind_name(const value& v);

/// Member lookup that returns nullptr when `v` is not an object or has no such key.
const value* member(const value& v, std::string_view key);

/// The string member `key` of `v`; empty when `v` is not an object or the member is absent or
/// not a string.
std::string string_member(const value& v, std::string_view key);

}  // namespace hearth::json
