#include "lafs/rpc_map.hpp"

#include <array>

namespace hearth::lafs {

namespace {

constexpr std::array<RpcMapping, 10> kMappings = {{
    {ErrorCode::kParseError, "the request is not JSON", kValidationSchema, false},
    {ErrorCode::kInvalidRequest, "not a valid JSON-RPC request (also an empty or oversized batch)",
     kValidationSchema, false},
    {ErrorCode::kMethodNotFound,
     "unknown method, service or endpoint; method not on this transport", kNotFoundResource, false},
    {ErrorCode::kInvalidParams, "invalid params or endpoint input", kValidationSchema, false},
    {ErrorCode::kInternalError, "internal error; handler output not matching schema.output",
     kInternalUnexpected, true},
    {ErrorCode::kPermissionDenied, "a file outside fileAccess (lavs/readFile)", kNotFoundResource,
     false},
    {ErrorCode::kPermissionDenied, "the jail cannot enforce the permissions, or a mechanism failed",
     kInternalUnexpected, true},
    {ErrorCode::kTimeout, "the handler ran past its time limit", kTransientUpstream, false},
    {ErrorCode::kHandlerError, "the handler failed (exit code, signal, output or memory limit)",
     kInternalUnexpected, true},
    {ErrorCode::kConflict, "a change against a version that is no longer current", kConflictVersion,
     false},
}};

const RpcMapping& row_for(const Error& error) {
  if (error.code == ErrorCode::kPermissionDenied) {
    // The jail's refusals name the mechanism; a path refusal names the path.
    const bool jail = error.data.is_object() && error.data.get_object().contains("mechanism");
    return jail ? kMappings[6] : kMappings[5];
  }
  for (const auto& row : kMappings) {
    if (row.jsonrpc == error.code) return row;
  }
  return kMappings[4];  // an unknown code is an internal error
}

}  // namespace

std::span<const RpcMapping> rpc_mappings() {
  return kMappings;
}

ErrorInfo to_lafs_error(const Error& error) {
  std::string message =
      error.message.empty() ? std::string(default_message(error.code)) : error.message;
  json::object details;
  details["jsonrpcCode"] = static_cast<int>(error.code);
  std::string_view code;
  bool escalate = false;
  const json::value* lafs =
      error.data.is_object() ? error.data.get_object().if_contains("lafs") : nullptr;
  if (lafs != nullptr && lafs->is_object() && lafs->get_object().contains("code") &&
      lafs->get_object().at("code").is_string()) {
    code = lafs->get_object().at("code").get_string();
    if (const json::value* d = lafs->get_object().if_contains("details");
        d != nullptr && d->is_object()) {
      for (const auto& kv : d->get_object()) details[kv.key()] = kv.value();
    }
  } else {
    const RpcMapping& row = row_for(error);
    code = row.lafs_code;
    escalate = row.escalation_required;
    if (error.data.is_object()) {
      for (const auto& kv : error.data.get_object()) details[kv.key()] = kv.value();
    } else if (!error.data.is_null()) {
      details["data"] = error.data;
    }
  }
  ErrorInfo info = ErrorInfo::from_registry(code, std::move(message), std::move(details));
  if (escalate) info.escalation_required = true;
  return info;
}

ErrorCode jsonrpc_code_for(std::string_view lafs_code) {
  const RegisteredCode* entry = find_code(lafs_code);
  if (entry == nullptr) return ErrorCode::kInternalError;
  if (lafs_code == kNotFoundResource) return ErrorCode::kMethodNotFound;
  if (lafs_code == kTransientUpstream || lafs_code == kRateLimited) return ErrorCode::kHandlerError;
  switch (entry->category) {
    case Category::kValidation:
    case Category::kContract:
    case Category::kConflict:
    case Category::kMigration:
      return ErrorCode::kInvalidParams;
    default:
      return ErrorCode::kInternalError;
  }
}

}  // namespace hearth::lafs
