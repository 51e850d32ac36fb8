#pragma once
/// Errors on the request path are values. One enum with stable numbers, equal to the JSON-RPC
/// wire codes (JSON-RPC 2.0 reserved codes and the LAVS codes of lavs-spec-v1 section 5.3).

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace hearth {

enum class ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kPermissionDenied = -32001,
  kTimeout = -32002,
  kHandlerError = -32003,
  /// A change made against a version that is no longer current (workspace expectedVersion).
  kConflict = -32010,
};

/// The standard message for a code ("Parse error", "Invalid params", ...).
std::string_view default_message(ErrorCode code);

/// An error as it travels to the caller: a code, a human message and optional structured data.
struct Error {
  ErrorCode code = ErrorCode::kInternalError;
  std::string message;
  boost::json::value data;  ///< null when there is nothing to add

  static Error make(ErrorCode code, std::string message, boost::json::value data = nullptr) {
    return Error{code, std::move(message), std::move(data)};
  }
};

/// -32602 "Invalid params: <message>" with data {field, constraint}: an argument that is missing
/// or malformed, named as the caller passed it (every method's parameters are read this way,
/// rpc/params.hpp, and components check their own arguments with it too).
Error invalid_param(const std::string& message, std::string_view field,
                    std::string_view constraint);

/// Serialises to the JSON-RPC error object {code, message[, data]}.
boost::json::object to_json(const Error& error);

}  // namespace hearth
