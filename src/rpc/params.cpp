#include "rpc/params.hpp"

namespace hearth::rpc {

Result<const json::object*> params_object(const Request& request) {
  static const json::object kNone;
  if (request.params.is_null()) return &kNone;
  if (!request.params.is_object()) {
    return invalid_param("params must be an object (parameters by name)", "params", "type");
  }
  return &request.params.get_object();
}

Result<std::string> required_string(const json::object& params, std::string_view name) {
  const json::value* v = params.if_contains(name);
  if (v == nullptr || v->is_null()) {
    return invalid_param("'" + std::string(name) + "' is required", name, "required");
  }
  if (!v->is_string()) {
    return invalid_param("'" + std::string(name) + "' must be a string", name, "type");
  }
  return std::string(v->get_string());
}

Result<std::optional<std::string>> string_param(const json::object& params, std::string_view name,
                                                bool required) {
  const json::value* v = params.if_contains(name);
  if (!required && (v == nullptr || v->is_null())) return std::optional<std::string>{};
  auto value = required_string(params, name);
  if (!value.ok()) return std::move(value).error();
  return std::optional<std::string>(std::move(value).value());
}

Result<bool> bool_param(const json::object& params, std::string_view name) {
  const json::value* v = params.if_contains(name);
  if (v == nullptr || v->is_null()) return false;
  if (!v->is_bool()) {
    return invalid_param("'" + std::string(name) + "' must be a boolean", name, "type");
  }
  return v->get_bool();
}

Result<std::optional<std::int64_t>> int_param(const json::object& params, std::string_view name,
                                              std::int64_t min, std::int64_t max) {
  const json::value* v = params.if_contains(name);
  if (v == nullptr || v->is_null()) return std::optional<std::int64_t>();
  const std::string range =
      max == std::numeric_limits<std::int64_t>::max()
          ? "an integer of at least " + std::to_string(min)
          : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!v->is_int64() && !v->is_uint64()) {
    return invalid_param("'" + std::string(name) + "' must be " + range, name, "type");
  }
  if (v->is_uint64() || v->get_int64() < min || v->get_int64() > max) {
    return invalid_param("'" + std::string(name) + "' must be " + range, name, "range");
  }
  return std::optional<std::int64_t>(v->get_int64());
}

json::value value_param(const json::object& params, std::string_view name) {
  const json::value* v = params.if_contains(name);
  return v != nullptr ? *v : json::value(nullptr);
}

json::value take_param(const Request& request, std::string_view name) {
  if (!request.params.is_object()) return nullptr;
  json::value* v = request.params.get_object().if_contains(name);
  return v != nullptr ? json::value(std::move(*v)) : json::value(nullptr);
}

}  // namespace hearth::rpc
