#pragma once
/// Checking a variable's value against its definition (type, pattern, format, min, max).

#include <string>
#include <string_view>

#include "a2s/model.hpp"
#include "common/result.hpp"

namespace hearth::a2s {

/// Checks `value` against `variable` and returns it in its typed form. Text is accepted for
/// every type and converted (values from the vault and the command line are text): "42" for a
/// number, "true" for a boolean, JSON text for an object or an array. A failure is
/// kInvalidParams whose message begins with the variable's name ("DATE: must be a date
/// (YYYY-MM-DD)") and whose data is {"variable", "rule", "expected"}; the message never
/// contains the value itself (it may be a secret).
Result<json::value> check_value(const Variable& variable, const json::value& value);

/// Whether check_value checks `format` (date, date-time, time, email, uri, url, uuid, ipv4, ipv6,
/// hostname, airport_code, currency, country, language).
bool known_format(std::string_view format);

/// The text a value is written as inside a request: strings as they are, numbers and booleans
/// as JSON text, objects and arrays as compact JSON.
std::string text_of(const json::value& value);

}  // namespace hearth::a2s
