#pragma once
/// hearth's own implementations of four draft-07 keywords, plugged into valijson as custom
/// constraints. The compiler renames the keywords in the copy of the schema valijson parses
/// (`type` -> kTypeKeyword, ...), so valijson's built-in versions never run:
///  - type: valijson treats 1.0 as "not an integer" and reports no expected type;
///  - format: valijson's check throws on objects and arrays and tests "5" for `date` when the
///    value is the number 5 (format must ignore non-strings);
///  - pattern: valijson uses std::regex (recursive, backtracking: a nested group crashed the
///    daemon on a 2 KB string); hearth's constraint matches with RE2 (ecma_regex.hpp), compiled
///    once and only read, so one compiled schema can be shared by threads; its message names the
///    pattern;
///  - uniqueItems: valijson compares every pair of items (and reports every equal pair); hearth's
///    sorts canonical forms, O(n log n), and reports the first equal pair.
/// valijson's patternProperties is kept, with its std::regex replaced by RE2 in hearth's copy of
/// valijson's validation_visitor.hpp (src/schema/valijson/).
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
inline constexpr std::string_view kUniqueItemsKeyword = "hearth:uniqueItems";

/// Registers the builders with `parser` (which takes ownership of them).
void add_own_keywords(valijson::SchemaParser& parser);

/// Whether `text` is a string of the given draft-07 format. Formats hearth does not check
/// ("email", "uri", ...) are annotations: every string passes.
bool matches_format(std::string_view format, std::string_view text);

}  // namespace hearth::schema::detail
