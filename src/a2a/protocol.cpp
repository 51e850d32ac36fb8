#include "a2a/protocol.hpp"

#include <array>
#include <cstdio>
#include <ctime>
#include <utility>

#include "common/ascii.hpp"
#include "common/random.hpp"
#include "rpc/params.hpp"

namespace hearth::a2a {

namespace {

constexpr std::string_view kErrorInfo = "type.googleapis.com/google.rpc.ErrorInfo";
constexpr std::string_view kBadRequest = "type.googleapis.com/google.rpc.BadRequest";
constexpr std::string_view kStruct = "type.googleapis.com/google.protobuf.Struct";
constexpr std::string_view kValue = "type.googleapis.com/google.protobuf.Value";
constexpr std::string_view kDomain = "a2a-protocol.org";
/// What the JS SDK marks a 0.3 data part with when it wraps a value that is not an object.
constexpr std::string_view kDataPartCompat = "data_part_compat";

struct StateNames {
  TaskState state;
  std::string_view v10;
  std::string_view v03;
};
constexpr std::array<StateNames, 8> kStates{{
    {TaskState::kSubmitted, "TASK_STATE_SUBMITTED", "submitted"},
    {TaskState::kWorking, "TASK_STATE_WORKING", "working"},
    {TaskState::kCompleted, "TASK_STATE_COMPLETED", "completed"},
    {TaskState::kFailed, "TASK_STATE_FAILED", "failed"},
    {TaskState::kCanceled, "TASK_STATE_CANCELED", "canceled"},
    {TaskState::kRejected, "TASK_STATE_REJECTED", "rejected"},
    {TaskState::kInputRequired, "TASK_STATE_INPUT_REQUIRED", "input-required"},
    {TaskState::kAuthRequired, "TASK_STATE_AUTH_REQUIRED", "auth-required"},
}};

/// Each A2A error: its ErrorInfo reason, and its HTTP status and google.rpc code name (spec 5.4).
struct A2aErrorKind {
  A2aCode code;
  std::string_view reason;
  int http_status;
  std::string_view status;
};
constexpr std::array<A2aErrorKind, 9> kA2aErrors{{
    {A2aCode::kTaskNotFound, "TASK_NOT_FOUND", 404, "NOT_FOUND"},
    {A2aCode::kTaskNotCancelable, "TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION"},
    {A2aCode::kPushNotificationNotSupported, "PUSH_NOTIFICATION_NOT_SUPPORTED", 400,
     "FAILED_PRECONDITION"},
    {A2aCode::kUnsupportedOperation, "UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION"},
    {A2aCode::kContentTypeNotSupported, "CONTENT_TYPE_NOT_SUPPORTED", 400, "INVALID_ARGUMENT"},
    {A2aCode::kInvalidAgentResponse, "INVALID_AGENT_RESPONSE", 500, "INTERNAL"},
    {A2aCode::kExtendedAgentCardNotConfigured, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", 400,
     "FAILED_PRECONDITION"},
    {A2aCode::kExtensionSupportRequired, "EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION"},
    {A2aCode::kVersionNotSupported, "VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"},
}};

const A2aErrorKind* a2a_kind(ErrorCode code) {
  for (const auto& k : kA2aErrors) {
    if (static_cast<int>(k.code) == static_cast<int>(code)) return &k;
  }
  return nullptr;
}

/// Major.Minor of a version text ("1.0", "0.3.0": a patch part changes nothing, spec 3.6; "1"
/// is 1.0); nullopt when it is not one.
std::optional<std::pair<int, int>> major_minor(std::string_view text) {
  int numbers[3] = {0, 0, 0};
  std::size_t count = 0;
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    int value = 0;
    while (i < text.size() && ascii::is_digit(text[i]) && i - start < 6) {
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    if (i == start) return std::nullopt;
    numbers[count++] = value;
    if (i == text.size()) break;
    if (text[i] != '.' || count == 3) return std::nullopt;
    ++i;
  }
  return std::make_pair(numbers[0], numbers[1]);
}

json::object string_metadata(const json::value& data) {
  json::object out;
  if (!data.is_object()) return out;
  for (const auto& [key, value] : data.get_object()) {
    out[key] = value.is_string() ? json::value(value.get_string()) : json::value(json::dump(value));
  }
  return out;
}

/// The `@type`d details of an error (spec 3.3.2, 9.5, 11.6).
json::array details_of(const Error& error) {
  json::array out;
  if (const auto* kind = a2a_kind(error.code)) {
    json::object info{{"@type", kErrorInfo}, {"reason", kind->reason}, {"domain", kDomain}};
    if (auto metadata = string_metadata(error.data); !metadata.empty()) {
      info["metadata"] = std::move(metadata);
    }
    out.push_back(std::move(info));
    return out;
  }
  if (error.data.is_null()) return out;
  if (error.code == ErrorCode::kInvalidParams && error.data.is_object() &&
      error.data.get_object().contains("field")) {
    const auto field = json::string_member(error.data, "field");
    out.push_back(json::object{
        {"@type", kBadRequest},
        {"fieldViolations",
         json::array{json::object{{"field", field}, {"description", error.message}}}}});
    out.push_back(json::object{{"@type", kErrorInfo},
                               {"reason", "INVALID_PARAMS"},
                               {"domain", kDomain},
                               {"metadata", string_metadata(error.data)}});
    return out;
  }
  out.push_back(
      json::object{{"@type", error.data.is_object() ? kStruct : kValue}, {"value", error.data}});
  return out;
}

Error invalid(const std::string& message, const std::string& field, std::string_view constraint) {
  return rpc::invalid_param(message, field, constraint);
}

/// A 0.3 part in the 1.0 form.
Result<json::object> part_from_v03(const json::object& p, const std::string& path) {
  json::object out;
  const std::string kind = json::string_member(p, "kind");
  if (const auto* metadata = p.if_contains("metadata"); metadata && metadata->is_object()) {
    out["metadata"] = *metadata;
  }
  if (kind == "text") {
    const auto* text = p.if_contains("text");
    if (text == nullptr || !text->is_string()) {
      return invalid(path + ".text must be a string", path + ".text", "type");
    }
    out["text"] = *text;
    return out;
  }
  if (kind == "file") {
    const auto* file = p.if_contains("file");
    if (file == nullptr || !file->is_object()) {
      return invalid(path + ".file must be an object", path + ".file", "type");
    }
    const auto& f = file->get_object();
    if (const auto* uri = f.if_contains("uri"); uri && uri->is_string()) {
      out["url"] = *uri;
    } else if (const auto* bytes = f.if_contains("bytes"); bytes && bytes->is_string()) {
      out["raw"] = *bytes;
    } else {
      return invalid(path + ".file needs `uri` or `bytes`", path + ".file", "required");
    }
    if (const auto* mime = f.if_contains("mimeType"); mime && mime->is_string()) {
      out["mediaType"] = *mime;
    }
    if (const auto* name = f.if_contains("name"); name && name->is_string()) {
      out["filename"] = *name;
    }
    return out;
  }
  if (kind == "data") {
    const auto* data = p.if_contains("data");
    if (data == nullptr) return invalid(path + ".data is required", path + ".data", "required");
    json::value value = *data;
    // A value the JS SDK wrapped for 0.3 ({"value": x} with data_part_compat) is unwrapped.
    if (auto* metadata = out.if_contains("metadata"); metadata != nullptr) {
      auto& m = metadata->get_object();
      if (const auto* flag = m.if_contains(kDataPartCompat); flag && flag->is_bool()) {
        if (flag->get_bool() && value.is_object() && value.get_object().contains("value")) {
          value = value.get_object().at("value");
        }
        m.erase(kDataPartCompat);
        if (m.empty()) out.erase("metadata");
      }
    }
    out["data"] = std::move(value);
    return out;
  }
  return invalid(path + ".kind must be \"text\", \"file\" or \"data\"", path + ".kind", "enum");
}

/// A 1.0 part, checked: exactly one of text, raw, url, data.
Result<json::object> part_from_v10(const json::object& p, const std::string& path) {
  if (p.contains("kind")) {
    return invalid(path +
                       " is an A2A 0.3 part (`kind`); in A2A 1.0 a part is {\"text\"}, "
                       "{\"data\"}, {\"url\"} or {\"raw\"} (this request was read as 1.0: it "
                       "sent A2A-Version 1.0)",
                   path, "oneOf");
  }
  int contents = 0;
  for (const char* key : {"text", "raw", "url", "data"}) {
    if (p.contains(key)) ++contents;
  }
  if (contents != 1) {
    return invalid(path + " must have exactly one of text, raw, url, data", path, "oneOf");
  }
  for (const char* key : {"text", "raw", "url", "filename", "mediaType"}) {
    if (const auto* v = p.if_contains(key); v && !v->is_string()) {
      return invalid(path + "." + key + " must be a string", path + "." + key, "type");
    }
  }
  return p;
}

}  // namespace

std::string_view version_name(Version v) {
  return v == Version::k10 ? "1.0" : "0.3";
}

std::optional<Version> parse_version(std::string_view text) {
  text = ascii::trim(text);
  if (text.empty()) return Version::k03;
  auto mm = major_minor(text);
  if (!mm) return std::nullopt;
  if (*mm == std::make_pair(0, 3)) return Version::k03;
  if (*mm == std::make_pair(1, 0)) return Version::k10;
  return std::nullopt;
}

Version card_version(std::string_view text) {
  text = ascii::trim(text);
  if (text.empty()) return Version::k03;
  auto mm = major_minor(text);
  if (mm && mm->first == 0 && mm->second >= 3) return Version::k03;
  return Version::k10;
}

std::string_view state_name(TaskState state, Version v) {
  for (const auto& s : kStates) {
    if (s.state == state) return v == Version::k10 ? s.v10 : s.v03;
  }
  return v == Version::k10 ? "TASK_STATE_UNSPECIFIED" : "unknown";
}

std::optional<TaskState> state_from_name(std::string_view name) {
  for (const auto& s : kStates) {
    if (s.v10 == name) return s.state;
  }
  return std::nullopt;
}

bool terminal(TaskState state) {
  return state == TaskState::kCompleted || state == TaskState::kFailed ||
         state == TaskState::kCanceled || state == TaskState::kRejected;
}

Error a2a_error(A2aCode code, std::string message, json::object metadata) {
  json::value data = nullptr;
  if (!metadata.empty()) data = std::move(metadata);
  return Error::make(static_cast<ErrorCode>(code), std::move(message), std::move(data));
}

json::object error_object(const Error& error, Version v) {
  json::object out{{"code", static_cast<int>(error.code)}, {"message", error.message}};
  if (v == Version::k03) {
    if (!error.data.is_null()) out["data"] = error.data;
    return out;
  }
  if (auto details = details_of(error); !details.empty()) out["data"] = std::move(details);
  return out;
}

void shape_errors(json::value& answer, Version v) {
  if (v == Version::k03) return;
  if (answer.is_array()) {
    for (auto& one : answer.get_array()) shape_errors(one, v);
    return;
  }
  auto* response = answer.if_object();
  if (response == nullptr) return;
  auto* error = response->if_contains("error");
  if (error == nullptr || !error->is_object()) return;
  const auto& e = error->get_object();
  Error parsed;
  if (const auto* code = e.if_contains("code"); code && code->is_int64()) {
    parsed.code = static_cast<ErrorCode>(code->get_int64());
  }
  parsed.message = json::string_member(*error, "message");
  if (const auto* data = e.if_contains("data")) parsed.data = *data;
  *error = error_object(parsed, v);
}

RestError rest_error(const Error& error) {
  RestError out;
  std::string_view status = "INTERNAL";
  if (const auto* kind = a2a_kind(error.code)) {
    out.http_status = kind->http_status;
    status = kind->status;
  } else {
    switch (error.code) {
      case ErrorCode::kParseError:
      case ErrorCode::kInvalidRequest:
      case ErrorCode::kInvalidParams:
        out.http_status = 400;
        status = "INVALID_ARGUMENT";
        break;
      case ErrorCode::kMethodNotFound:
        out.http_status = 404;
        status = "NOT_FOUND";
        break;
      default:
        out.http_status = 500;
        status = "INTERNAL";
        break;
    }
  }
  json::object e{{"code", out.http_status}, {"status", status}, {"message", error.message}};
  if (auto details = details_of(error); !details.empty()) e["details"] = std::move(details);
  out.body = json::object{{"error", std::move(e)}};
  return out;
}

Result<json::object> read_message(const json::value& message, Version v, std::string_view path) {
  const std::string p(path);
  if (!message.is_object()) return invalid("'" + p + "' must be an object", p, "type");
  const auto& m = message.get_object();
  const std::string_view user = v == Version::k10 ? "ROLE_USER" : "user";
  if (const auto* role = m.if_contains("role");
      !role || !role->is_string() || role->get_string() != user) {
    std::string hint;
    if (role && role->is_string() &&
        (role->get_string() == "user" || role->get_string() == "ROLE_USER")) {
      hint = v == Version::k10
                 ? " (\"user\" is A2A 0.3's spelling; this request was read as A2A 1.0)"
                 : " (ROLE_USER is A2A 1.0's spelling: send the header A2A-Version: 1.0)";
    }
    return invalid(p + ".role must be \"" + std::string(user) + "\"" + hint, p + ".role", "enum");
  }
  const auto* parts = m.if_contains("parts");
  if (parts == nullptr || !parts->is_array() || parts->get_array().empty()) {
    return invalid(p + ".parts must be a non-empty array", p + ".parts", "minItems");
  }
  json::array converted;
  std::size_t i = 0;
  for (const auto& part : parts->get_array()) {
    const std::string part_path = p + ".parts[" + std::to_string(i++) + "]";
    if (!part.is_object()) return invalid(part_path + " must be an object", part_path, "type");
    auto one = v == Version::k10 ? part_from_v10(part.get_object(), part_path)
                                 : part_from_v03(part.get_object(), part_path);
    if (!one.ok()) return one.error();
    converted.push_back(std::move(one).value());
  }
  json::object out;
  for (const char* key : {"messageId", "contextId", "taskId"}) {
    if (const auto* s = m.if_contains(key); s && !s->is_null()) {
      if (!s->is_string()) {
        return invalid(p + "." + key + " must be a string", p + "." + key, "type");
      }
      out[key] = *s;
    }
  }
  out["role"] = "ROLE_USER";
  out["parts"] = std::move(converted);
  if (const auto* metadata = m.if_contains("metadata"); metadata && !metadata->is_null()) {
    if (!metadata->is_object()) {
      return invalid(p + ".metadata must be an object", p + ".metadata", "type");
    }
    out["metadata"] = *metadata;
  }
  for (const char* key : {"extensions", "referenceTaskIds"}) {
    if (const auto* a = m.if_contains(key); a && a->is_array()) out[key] = *a;
  }
  return out;
}

json::object part_in(const json::value& part, Version v) {
  if (!part.is_object()) return {};
  const auto& p = part.get_object();
  if (v == Version::k10) return p;
  json::object out;
  const auto* metadata = p.if_contains("metadata");
  if (const auto* text = p.if_contains("text")) {
    out = json::object{{"kind", "text"}, {"text", *text}};
  } else if (p.contains("url") || p.contains("raw")) {
    json::object file;
    if (const auto* url = p.if_contains("url")) file["uri"] = *url;
    if (const auto* raw = p.if_contains("raw")) file["bytes"] = *raw;
    if (const auto* media = p.if_contains("mediaType")) file["mimeType"] = *media;
    if (const auto* name = p.if_contains("filename")) file["name"] = *name;
    out = json::object{{"kind", "file"}, {"file", std::move(file)}};
  } else if (const auto* data = p.if_contains("data")) {
    if (data->is_object()) {
      out = json::object{{"kind", "data"}, {"data", *data}};
    } else {
      // 0.3 data parts hold objects: another value travels wrapped, as the JS SDK wraps it.
      json::object flagged =
          metadata && metadata->is_object() ? metadata->get_object() : json::object{};
      flagged[kDataPartCompat] = true;
      return json::object{{"kind", "data"},
                          {"data", json::object{{"value", *data}}},
                          {"metadata", std::move(flagged)}};
    }
  }
  if (metadata != nullptr) out["metadata"] = *metadata;
  return out;
}

json::object message_in(const json::object& message, Version v) {
  if (v == Version::k10) return message;
  json::object out = message;
  out["kind"] = "message";
  out["role"] = json::string_member(message, "role") == "ROLE_AGENT" ? "agent" : "user";
  json::array parts;
  if (const auto* p = message.if_contains("parts"); p && p->is_array()) {
    for (const auto& part : p->get_array()) parts.push_back(part_in(part, v));
  }
  out["parts"] = std::move(parts);
  return out;
}

json::object artifact_in(const json::object& artifact, Version v) {
  if (v == Version::k10) return artifact;
  json::object out = artifact;
  json::array parts;
  if (const auto* p = artifact.if_contains("parts"); p && p->is_array()) {
    for (const auto& part : p->get_array()) parts.push_back(part_in(part, v));
  }
  out["parts"] = std::move(parts);
  return out;
}

json::object agent_message(std::string text, json::value data, const std::string& task_id,
                           const std::string& context_id) {
  json::array parts{json::object{{"text", std::move(text)}}};
  if (!data.is_null()) parts.push_back(json::object{{"data", std::move(data)}});
  return json::object{{"messageId", random_hex(16)},
                      {"role", "ROLE_AGENT"},
                      {"parts", std::move(parts)},
                      {"taskId", task_id},
                      {"contextId", context_id}};
}

json::object status_in(const TaskRecord& task, Version v) {
  json::object status{{"state", state_name(task.state, v)}, {"timestamp", task.timestamp}};
  if (task.status_message.is_object()) {
    status["message"] = message_in(task.status_message.get_object(), v);
  }
  return status;
}

json::object task_in(const TaskRecord& task, Version v, const TaskShape& shape) {
  json::object out;
  if (v == Version::k03) out["kind"] = "task";
  out["id"] = task.id;
  out["contextId"] = task.context_id;
  out["status"] = status_in(task, v);
  std::size_t first = 0;
  if (shape.history_length && *shape.history_length >= 0 &&
      task.history.size() > static_cast<std::size_t>(*shape.history_length)) {
    first = task.history.size() - static_cast<std::size_t>(*shape.history_length);
  }
  json::array history;
  for (std::size_t i = first; i < task.history.size(); ++i) {
    history.push_back(message_in(task.history[i].as_object(), v));
  }
  // 1.0 leaves an empty history out (historyLength 0: "SHOULD be omitted"); 0.3 always had it.
  if (v == Version::k03 || !history.empty()) out["history"] = std::move(history);
  if (shape.artifacts && !task.artifacts.empty()) {
    json::array artifacts;
    for (const auto& a : task.artifacts) artifacts.push_back(artifact_in(a.as_object(), v));
    out["artifacts"] = std::move(artifacts);
  }
  return out;
}

json::object task_event(const TaskRecord& task, Version v) {
  if (v == Version::k03) return task_in(task, v);
  return json::object{{"task", task_in(task, v)}};
}

json::object status_event(const TaskRecord& task, Version v) {
  json::object event{
      {"taskId", task.id}, {"contextId", task.context_id}, {"status", status_in(task, v)}};
  if (v == Version::k10) return json::object{{"statusUpdate", std::move(event)}};
  event["kind"] = "status-update";
  event["final"] = terminal(task.state);
  return event;
}

json::object artifact_event(const TaskRecord& task, const json::object& artifact, Version v) {
  json::object event{{"taskId", task.id},
                     {"contextId", task.context_id},
                     {"artifact", artifact_in(artifact, v)},
                     {"append", false},
                     {"lastChunk", true}};
  if (v == Version::k10) return json::object{{"artifactUpdate", std::move(event)}};
  event["kind"] = "artifact-update";
  return event;
}

std::string iso_timestamp(std::chrono::system_clock::time_point t) {
  const auto since = t.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_timestamp(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&](std::size_t n) -> std::optional<int> {
    if (i + n > text.size()) return std::nullopt;
    int value = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (!ascii::is_digit(text[i + k])) return std::nullopt;
      value = value * 10 + (text[i + k] - '0');
    }
    i += n;
    return value;
  };
  auto expect = [&](std::string_view chars) {
    if (i < text.size() && chars.find(text[i]) != std::string_view::npos) {
      ++i;
      return true;
    }
    return false;
  };
  std::tm tm{};
  auto year = digits(4);
  if (!year || !expect("-")) return std::nullopt;
  auto month = digits(2);
  if (!month || !expect("-")) return std::nullopt;
  auto day = digits(2);
  if (!day || !expect("Tt")) return std::nullopt;
  auto hour = digits(2);
  if (!hour || !expect(":")) return std::nullopt;
  auto minute = digits(2);
  if (!minute || !expect(":")) return std::nullopt;
  auto second = digits(2);
  if (!second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  std::int64_t millis = 0;
  if (expect(".")) {
    int scale = 100;
    const std::size_t start = i;
    while (i < text.size() && ascii::is_digit(text[i])) {
      millis += static_cast<std::int64_t>(text[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  std::int64_t offset = 0;
  if (!expect("Zz")) {
    if (i >= text.size() || (text[i] != '+' && text[i] != '-')) return std::nullopt;
    const int sign = text[i] == '-' ? -1 : 1;
    ++i;
    auto oh = digits(2);
    if (!oh || !expect(":")) return std::nullopt;
    auto om = digits(2);
    if (!om || *oh > 23 || *om > 59) return std::nullopt;
    offset = static_cast<std::int64_t>(sign) * (*oh * 3600 + *om * 60);
  }
  if (i != text.size()) return std::nullopt;
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  using Clock = std::chrono::system_clock;
  const std::int64_t secs = static_cast<std::int64_t>(timegm(&tm)) - offset;
  // The clock counts nanoseconds in 64 bits (years 1677 to 2262): a date outside is the end.
  constexpr std::int64_t kLimit =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::duration::max()).count() - 1;
  if (secs >= kLimit) return Clock::time_point::max();
  if (secs <= -kLimit) return Clock::time_point::min();
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::seconds(secs) + std::chrono::milliseconds(millis)));
}

}  // namespace hearth::a2a
