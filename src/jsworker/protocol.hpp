#pragma once
/// The messages between the daemon and a JS worker (hearth-js-worker), defined once for both
/// sides. Each message is one frame (js/frame.hpp) holding one compact JSON object whose "t"
/// member names it; docs/protocol.md ("JS worker protocol") lists them.
///
///   daemon -> worker   Init (first frame), CallFunction, EvaluateSource, and HostAnswer to
///                      each HostCall
///   worker -> daemon   Ready (after Init), then for each request: Started, any Log, Publish
///                      and HostCall (a call that allows it), and one Returned or Failed
///
/// encode() writes a message's payload (without the length prefix; frame() adds it); decode_*()
/// reads one from a parsed JSON value. Each side parses the payload text itself (both with
/// json::parse_text), so decoding starts from a value. A member that is missing or of the wrong
/// type, or an unknown "t", is an error: a peer that sends one is broken.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.hpp"

namespace hearth::jsworker {

// --- daemon -> worker -----------------------------------------------------------------------

/// The first frame: what the worker's engine may do, from the pool's permission set.
struct Init {
  std::string service;
  std::string service_dir;  ///< canonical; modules and data paths are relative to it
  std::optional<std::vector<std::string>> file_access;  ///< fileAccess globs; absent: none
  /// false: no network; true: direct; a list: those hosts, through the jail's egress proxy
  std::variant<bool, std::vector<std::string>> network = false;
  std::optional<std::uint64_t> max_heap;   ///< bytes (maxMemory); absent: the engine's default
  std::vector<std::string> subscriptions;  ///< what ctx.publish may name
  bool operator==(const Init&) const = default;
};

/// Calls `function(input, ctx)` exported by `module`, a file relative to the service folder.
struct CallFunction {
  std::uint64_t id = 0;
  std::string module;
  std::string function;
  std::string endpoint;  ///< ctx.endpoint
  boost::json::value input;
  std::chrono::milliseconds timeout{0};  ///< the time left when the worker gets it
  /// The same limit as a point in time: CLOCK_MONOTONIC (std::chrono::steady_clock, which the
  /// worker shares with the daemon), in nanoseconds. The worker stops at the earlier of the two,
  /// and answers a timeout without running anything when the point has passed before it begins
  /// (a request written while the worker still ran another). Absent: timeoutMs alone.
  std::optional<std::int64_t> deadline_ns;
  bool mutation = false;  ///< the files it touches are locked exclusively (else shared)
  /// The handler's `isolation: "worker"`: the module is instantiated once in a realm the worker
  /// keeps for the later calls of the same module (module state survives between them).
  bool keep_state = false;
  /// `ctx.invoke(capability, method, params)` is given to the function: each call is a HostCall
  /// the daemon answers (an Agent App's worker reaching the capability bridge).
  bool host_calls = false;
  /// Other requests were waiting for the pool's workers when this one was sent: after it the
  /// worker prepares no realm (Engine::prepare), since the next request is on its way and would
  /// wait for the preparation.
  bool busy = false;
  bool operator==(const CallFunction&) const = default;
};

/// Runs `source` as the body of a strict async function (so `return` gives the value and `await`
/// works) in a fresh global that holds, besides the standard library, `console` and
/// `setTimeout`, one writable property per member of `globals` (a copy of its JSON value). The
/// answer carries the value returned and those globals' final values; a promise the source
/// leaves rejected with no handler fails it.
struct EvaluateSource {
  std::uint64_t id = 0;
  std::string source;
  std::string filename = "script";  ///< names the source in errors and stacks
  boost::json::object globals;
  /// Trusted set-up source run first in the same global as a classic script (its top-level
  /// function declarations become globals), named `prelude_filename` in errors. Empty: none.
  std::string prelude;
  std::string prelude_filename = "prelude";
  /// Every clock of the evaluation pinned to this time (ms since the epoch); absent: real time.
  std::optional<std::int64_t> clock_ms;
  /// A `ctx` with readFile and fetch, as far as the pool's permissions allow them.
  bool io = false;
  std::chrono::milliseconds timeout{0};
  std::optional<std::int64_t> deadline_ns;  ///< as CallFunction::deadline_ns
  bool operator==(const EvaluateSource&) const = default;
};

/// The daemon's answer to HostCall `id`: {"result": value} or {"error": {code, message, data}}.
/// The worker waits for it before it goes on with the request.
struct HostAnswer {
  std::uint64_t id = 0;
  boost::json::object answer;
  bool operator==(const HostAnswer&) const = default;
};

using ToWorker = std::variant<Init, CallFunction, EvaluateSource, HostAnswer>;

// --- worker -> daemon -----------------------------------------------------------------------

/// The engine is up: requests may come.
struct Ready {
  std::int64_t pid = 0;
  bool operator==(const Ready&) const = default;
};

/// The worker began request `id`: one that dies before this ran nothing of it.
struct Started {
  std::uint64_t id = 0;
  bool operator==(const Started&) const = default;
};

enum class LogLevel { kDebug, kInfo, kWarn, kError };

/// A console.* or ctx.log line of request `id`.
struct Log {
  std::uint64_t id = 0;
  LogLevel level = LogLevel::kInfo;
  std::string message;
  bool operator==(const Log&) const = default;
};

/// ctx.publish(subscription, data) during request `id`.
struct Publish {
  std::uint64_t id = 0;
  std::string subscription;
  boost::json::value data;
  bool operator==(const Publish&) const = default;
};

/// Request `id` succeeded.
struct Returned {
  std::uint64_t id = 0;
  boost::json::value value;  ///< what the function returned (or its promise gave), as JSON
  /// EvaluateSource: the final values of its globals; absent for a function call.
  std::optional<boost::json::object> globals;
  /// The worker collects garbage in full before it reads another request, and says Collected
  /// when it has: a request is better given to another worker meanwhile.
  bool collecting = false;
  bool operator==(const Returned&) const = default;
};

enum class FailureKind {
  kThrown,       ///< the code threw or its promise rejected
  kPermission,   ///< an uncaught refusal of ctx.readFile/writeFile/fetch
  kTimeout,      ///< stopped at its deadline; the worker serves the next request
  kOutOfMemory,  ///< the heap or memory limit was reached; the worker exits after sending it
  kConfig,       ///< the module or function cannot be loaded
};

/// Request `id` failed. `file`, `line` and `column` locate the error when known (0: unknown).
struct Failed {
  std::uint64_t id = 0;
  FailureKind kind = FailureKind::kThrown;
  std::string message;
  std::string name;   ///< the error's name (Error, TypeError...)
  std::string stack;  ///< "fn@file:line:column" lines
  std::string file;
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  bool collecting = false;  ///< as Returned::collecting
  bool operator==(const Failed&) const = default;
};

/// The full collection announced with an answer (Returned::collecting) is over.
struct Collected {
  bool operator==(const Collected&) const = default;
};

/// ctx.invoke during request `id`: {capability, method, params}. Answered by one HostAnswer.
struct HostCall {
  std::uint64_t id = 0;
  boost::json::object call;
  bool operator==(const HostCall&) const = default;
};

using FromWorker =
    std::variant<Ready, Started, Log, Publish, Returned, Failed, HostCall, Collected>;

// --- encoding -------------------------------------------------------------------------------

std::string encode(const ToWorker& message);
std::string encode(const FromWorker& message);

/// The payload of a Returned whose value (and globals) are already JSON text, as the engine
/// produces them: spliced in, not parsed again. Decodes to the same Returned as encode() of it.
std::string encode_returned(std::uint64_t id, std::string_view value_json,
                            std::optional<std::string_view> globals_json = std::nullopt,
                            bool collecting = false);

/// `payload` with its frame's length prefix (js::encode_frame).
std::string frame(std::string_view payload);

Result<ToWorker> decode_to_worker(const boost::json::value& message);
Result<FromWorker> decode_from_worker(const boost::json::value& message);

/// The request a worker's message is about (0 for Ready).
std::uint64_t request_id(const FromWorker& message);

/// The names of levels and kinds on the wire ("warn", "oom"...), and back (nullopt: unknown).
std::string_view to_string(LogLevel level);
std::string_view to_string(FailureKind kind);
std::optional<LogLevel> parse_log_level(std::string_view name);
std::optional<FailureKind> parse_failure_kind(std::string_view name);

}  // namespace hearth::jsworker
