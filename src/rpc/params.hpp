#pragma once
/// Reading a method's parameters: every method group takes its parameters by name through
/// these, so that a missing or mistyped one gets the same -32602 error everywhere
/// (`data.field`, `data.constraint`).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::rpc {

/// -32602 "Invalid params: <message>" with data {field, constraint} (common/error.hpp).
using hearth::invalid_param;

/// The request's params as an object (not copied: it lives as long as the request); absent
/// params are an empty object.
Result<const json::object*> params_object(const Request& request);

/// A string member; nullopt when absent (or null) and not required.
Result<std::optional<std::string>> string_param(const json::object& params, std::string_view name,
                                                bool required);

/// A required string member.
Result<std::string> required_string(const json::object& params, std::string_view name);

/// A boolean member; false when absent (or null).
Result<bool> bool_param(const json::object& params, std::string_view name);

/// An integer member from `min` to `max`; nullopt when absent (or null). Not an integer:
/// constraint "type"; out of range: "range".
Result<std::optional<std::int64_t>> int_param(
    const json::object& params, std::string_view name, std::int64_t min,
    std::int64_t max = std::numeric_limits<std::int64_t>::max());

/// A member as it is; null when absent.
json::value value_param(const json::object& params, std::string_view name);
/// A member of the request's params moved out (null there afterwards), not copied: for a value
/// as large as the client sent (an endpoint's input). Null when absent or params is no object.
json::value take_param(const Request& request, std::string_view name);

}  // namespace hearth::rpc
