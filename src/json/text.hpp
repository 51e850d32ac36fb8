#pragma once
/// text_of: a JSON value as text where a string is expected (URL placeholders and query values,
/// script arguments and environment variables).

#include <optional>
#include <string>

#include "json/json.hpp"

namespace hearth::json {

/// Strings as they are, numbers and booleans as JSON text (3, 1.5, true), arrays and objects as
/// compact JSON; nullopt for null.
std::optional<std::string> text_of(const value& v);

}  // namespace hearth::json
