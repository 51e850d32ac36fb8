#pragma once
/// A2A's wire shapes in both versions hearth speaks, with no I/O: A2A 1.0 (the current
/// specification, a2aproject/A2A v1.0.1: ProtoJSON enums, parts without `kind`, wrapper results,
/// error details as `@type`d objects) and A2A 0.3 (lower-case enums, `kind` on every object).
/// Tasks, messages, parts and artifacts are kept in the 1.0 form and turned into the asked
/// version when they are written; a 0.3 request's message is read into the 1.0 form.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::a2a {

enum class Version { k03, k10 };

/// "0.3" or "1.0".
std::string_view version_name(Version v);

/// The version an `A2A-Version` value asks for: Major.Minor, any patch ignored (spec 3.6); empty
/// is 0.3 (spec 3.6.2). nullopt for a version hearth does not speak.
std::optional<Version> parse_version(std::string_view text);

/// The card a request gets: the 0.3 card for no version, an empty one or one in [0.3, 1.0); the
/// 1.0 card for anything else (as the JS SDK's server decides).
Version card_version(std::string_view text);

enum class TaskState {
  kSubmitted,
  kWorking,
  kCompleted,
  kFailed,
  kCanceled,
  kRejected,
  kInputRequired,
  kAuthRequired,
};

/// "TASK_STATE_COMPLETED" (1.0) or "completed" (0.3).
std::string_view state_name(TaskState state, Version v);
/// A 1.0 state name; nullopt for anything else (TASK_STATE_UNSPECIFIED included).
std::optional<TaskState> state_from_name(std::string_view name);
/// COMPLETED, FAILED, CANCELED, REJECTED (spec 3.3.2).
bool terminal(TaskState state);

/// A2A's own error codes (spec 5.4; the same numbers in 0.3 up to -32007).
enum class A2aCode : int {
  kTaskNotFound = -32001,
  kTaskNotCancelable = -32002,
  kPushNotificationNotSupported = -32003,
  kUnsupportedOperation = -32004,
  kContentTypeNotSupported = -32005,
  kInvalidAgentResponse = -32006,
  kExtendedAgentCardNotConfigured = -32007,
  kExtensionSupportRequired = -32008,
  kVersionNotSupported = -32009,
};

/// An A2A error; `metadata` (string values) becomes the 1.0 ErrorInfo's metadata and the 0.3
/// error's data.
Error a2a_error(A2aCode code, std::string message, json::object metadata = {});

/// The JSON-RPC error object {code, message, data} in `v`'s form: 0.3 keeps hearth's data as it
/// is; 1.0 makes `data` an array of `@type`d details (spec 9.5): a google.rpc.ErrorInfo for A2A
/// errors (reason, domain a2a-protocol.org, metadata), a google.rpc.BadRequest and an ErrorInfo
/// INVALID_PARAMS for -32602, and any other data as a google.protobuf.Struct or Value.
json::object error_object(const Error& error, Version v);

/// Rewrites the errors of a JSON-RPC answer (one response or a batch) into `v`'s form.
void shape_errors(json::value& answer, Version v);

/// The HTTP+JSON binding's error (spec 11.6): the HTTP status of spec 5.4, and the body
/// {"error": {code, status, message, details}} (google.rpc.Status).
struct RestError {
  int http_status = 500;
  json::object body;
};
RestError rest_error(const Error& error);

/// A request's message read into the 1.0 form and checked: role user, a non-empty `parts` of
/// known parts. `path` names it in errors ("message").
Result<json::object> read_message(const json::value& message, Version v,
                                  std::string_view path = "message");

/// A part, message or artifact (1.0 form) in `v`'s form.
json::object part_in(const json::value& part, Version v);
json::object message_in(const json::object& message, Version v);
json::object artifact_in(const json::object& artifact, Version v);

/// An agent's message (1.0 form): a text part, and a data part when `data` is not null.
json::object agent_message(std::string text, json::value data, const std::string& task_id,
                           const std::string& context_id);

/// A task as hearth keeps it (1.0 forms inside).
struct TaskRecord {
  std::string id;
  std::string context_id;
  TaskState state = TaskState::kSubmitted;
  json::value status_message = nullptr;  ///< a message (1.0 form) or null
  std::string timestamp;                 ///< of the last status change (ISO 8601, UTC, ms)
  std::chrono::system_clock::time_point updated;
  /// Grows with every status change of any task: ListTasks' order and its page cursor.
  std::uint64_t sequence = 0;
  json::array history;    ///< messages (1.0 form)
  json::array artifacts;  ///< artifacts (1.0 form)
};

/// What of a task to show.
struct TaskShape {
  /// At most this many of the latest messages; 0 leaves `history` out in 1.0 (spec 3.2.4).
  std::optional<std::int64_t> history_length;
  bool artifacts = true;
};

json::object task_in(const TaskRecord& task, Version v, const TaskShape& shape = {});
json::object status_in(const TaskRecord& task, Version v);

/// Stream events: 1.0 StreamResponse objects ({"task"}, {"statusUpdate"}, {"artifactUpdate"});
/// 0.3 objects with `kind` (the status update's `final` is true at a terminal state).
json::object task_event(const TaskRecord& task, Version v);
json::object status_event(const TaskRecord& task, Version v);
json::object artifact_event(const TaskRecord& task, const json::object& artifact, Version v);

/// Now as ISO 8601 UTC with milliseconds ("2025-10-28T10:30:00.000Z").
std::string iso_timestamp(std::chrono::system_clock::time_point t);
/// An ISO 8601 date-time ("2025-10-28T10:30:00Z", fractions and a +hh:mm offset allowed).
std::optional<std::chrono::system_clock::time_point> parse_timestamp(std::string_view text);

}  // namespace hearth::a2a
