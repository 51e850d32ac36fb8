#pragma once
/// The string checks the envelope schema asks for, with the exact acceptance of the reference
/// validator (ajv 8 with ajv-formats 3, "full" formats), so that hearth and the reference agree
/// on every envelope: `format: date-time`, `format: uri`, the version `pattern` and lengths in
/// code points. Hand-written (no regex engine): the differential test compares them with ajv.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hearth::lafs {

/// RFC 3339 date-time as ajv-formats checks it: date, a 'T', 't' or white-space separator, time
/// with a required time zone; leap seconds only at 23:59:60 UTC.
bool is_date_time(std::string_view s);

/// RFC 3986 absolute URI (scheme ":" hier-part ["?" query] ["#" fragment]), ASCII only, with the
/// reference's quirk that "scheme:/host" is read as an authority too.
bool is_uri(std::string_view s);

/// `^\d+\.\d+\.\d+$` (ASCII digits).
bool is_semver_triplet(std::string_view s);

/// Number of Unicode code points of UTF-8 text (what JSON Schema's minLength/maxLength count).
std::size_t code_point_count(std::string_view utf8);

/// The first `n` code points of `utf8`.
std::string truncate_code_points(std::string_view utf8, std::size_t n);

/// Decodes the code point at `i` and advances `i`; invalid bytes decode as U+FFFD, one byte each.
char32_t next_code_point(std::string_view utf8, std::size_t& i);

}  // namespace hearth::lafs
