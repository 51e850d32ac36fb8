#pragma once
/// Draft-07 structure helpers shared by the compiler and apply_defaults: which members of a schema
/// object are themselves schemas, and JSON pointers (the part of a `$ref` after '#').
/// Internal to src/schema/.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.hpp"

namespace hearth::schema::detail {

/// Calls `visit(child, child_path)` for every direct subschema of `schema` (properties.x, items,
/// items[1], allOf[0], definitions.y, dependencies.z when it is a schema, if/then/else, ...).
/// Values of non-applicator keywords (enum, const, default, examples) are never visited: they
/// are data, not schemas. `path` is the schema's own path in hearth's dotted notation.
void for_each_subschema(const json::value& schema, const std::string& path,
                        const std::function<void(const json::value&, const std::string&)>& visit);

/// The reference tokens of a JSON pointer ("" or "/a/b~1c"), with ~0, ~1 and %-escapes decoded;
/// nullopt when `pointer` is not a JSON pointer (e.g. a plain-name fragment such as "foo").
std::optional<std::vector<std::string>> parse_pointer(std::string_view pointer);

/// The value `tokens` designates inside `root`, or nullptr.
const json::value* resolve_pointer(const json::value& root, const std::vector<std::string>& tokens);

/// `tokens` (which resolve inside `root`) as a dotted path: {"types","Todo","items"} ->
/// "types.Todo.items", {"allOf","0"} -> "allOf[0]".
std::string pointer_path(const json::value& root, const std::vector<std::string>& tokens);

}  // namespace hearth::schema::detail
