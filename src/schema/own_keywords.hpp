#pragma once
/// hearth's own implementations of three draft-07 keywords, plugged into valijson as custom
/// constraints. The compiler renames the keywords in the copy of the schema valijson parses
/// (`type` -> kTypeKeyword, ...), so valijson's built-in versions never run:
///  - type: valijson treats 1.0 as "not an integer" and reports no expected type;
///  - format: valijson's check throws on objects and arrays and tests "5" for `date` when the
///    value is the number 5 (format must ignore non-strings);
///  - pattern: valijson keeps a per-Validator regex cache that validation mutates; hearth's
///    constraint compiles its regex once and only reads it, so one compiled schema can be shared
///    by threads, and its message names the pattern.
/// Internal to src/schema/: this is the only header besides schema.cpp that includes valijson.

// valijson reports bad schemas with exceptions only when this is set (else it prints and aborts);
// CMake sets it for hearth_schema, the one target that includes valijson.
#if !defined(VALIJSON_USE_EXCEPTIONS) || !VALIJSON_USE_EXCEPTIONS
#error "valijson must be built with VALIJSON_USE_EXCEPTIONS=1"
#endif

#include <string_view>
#include <valijson/schema_parser.hpp>

namespace hearth::schema::detail {

inline constexpr std::string_view kTypeKeyword = "hearth:type";
inline constexpr std::string_view kFormatKeyword = "hearth:format";
inline constexpr std::string_view kPatternKeyword = "hearth:pattern";

/// Registers the three builders with `parser` (which takes ownership of them).
void add_own_keywords(valijson::SchemaParser& parser);

/// Whether `text` is a string of the given draft-07 format. Formats hearth does not check
/// ("email", "uri", ...) are annotations: every string passes.
bool matches_format(std::string_view format, std::string_view text);

}  // namespace hearth::schema::detail
