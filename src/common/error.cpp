#include "common/error.hpp"

namespace hearth {

std::string_view default_message(ErrorCode code) {
  switch (code) {
    case ErrorCode::kParseError:
      return "Parse error";
    case ErrorCode::kInvalidRequest:
      return "Invalid Request";
    case ErrorCode::kMethodNotFound:
      return "Method not found";
    case ErrorCode::kInvalidParams:
      return "Invalid params";
    case ErrorCode::kInternalError:
      return "Internal error";
    case ErrorCode::kPermissionDenied:
      return "Permission denied";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kHandlerError:
      return "Handler error";
    case ErrorCode::kConflict:
      return "Conflict";
  }
  return "Error";
}

Error invalid_param(const std::string& message, std::string_view field,
                    std::string_view constraint) {
  boost::json::object data;
  data["field"] = field;
  data["constraint"] = constraint;
  return Error::make(ErrorCode::kInvalidParams, "Invalid params: " + message, std::move(data));
}

boost::json::object to_json(const Error& error) {
  boost::json::object out;
  out["code"] = static_cast<int>(error.code);
  out["message"] = error.message.empty() ? std::string(default_message(error.code)) : error.message;
  if (!error.data.is_null()) out["data"] = error.data;
  return out;
}

}  // namespace hearth
