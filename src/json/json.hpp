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

/// Compact serialisation.
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
