#pragma once
/// Turns the engine's raw error reports into hearth Violations. Internal to src/schema/; kept free
/// of valijson types so that the mapping can be tested on its own.

#include <string>
#include <string_view>
#include <vector>

#include "json/json.hpp"
#include "schema/schema.hpp"

namespace hearth::schema::detail {

/// One error as valijson reports it: the instance context ("<root>", "[text]", "[2]", ...) and a
/// description sentence.
struct EngineError {
  std::vector<std::string> context;
  std::string description;
};

/// The description hearth's own keyword implementations report, which to_violations() maps back
/// to `keyword` and `message` exactly.
std::string own_description(std::string_view keyword, std::string_view message);

/// Maps `errors`, reported while validating `instance`, to violations: keyword and instance path
/// for each, structural parent reports ("Failed to validate item #2 in array") dropped when a
/// more specific report below them explains the failure, exact duplicates removed, engine order
/// (children before their parents) kept. A description hearth does not recognise becomes
/// constraint "schema" with the description as message, so nothing is ever lost.
std::vector<Violation> to_violations(const std::vector<EngineError>& errors,
                                     const json::value& instance);

/// "5.000000" -> "5", "0.250000" -> "0.25": valijson prints limits with std::to_string.
std::string trim_number(std::string_view printed);

}  // namespace hearth::schema::detail
