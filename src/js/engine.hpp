#pragma once
/// The JavaScript engine of a hearth JS worker: one SpiderMonkey 102 context running one call (or
/// one evaluation of source text) at a time, each in a fresh global (its own realm), so calls
/// cannot see each other's state.
///
/// What a call sees (docs/protocol.md, "function handlers", is the user-facing description):
/// - the ES standard library, `console.log/info/warn/error/debug`, `setTimeout`/`clearTimeout`;
/// - its module, instantiated anew in the call's global from a compiled stencil that is cached per
///   worker (recompiled when the file changes), with its imports (relative specifiers only, inside
///   the service folder, resolved like `./x.js`, `./x`, `./x.mjs`);
/// - `ctx` (the second argument): input, endpoint, service, log, readFile, writeFile, publish,
///   fetch - nothing else of the daemon.
/// Module-level state therefore lasts one call: a module is evaluated for every call.
///
/// Limits: the call's time through an interrupt callback requested by a watchdog thread (the daemon
/// kills the worker if that does not stop it), the heap through JSGC_MAX_BYTES.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace hearth::js {

struct WorkerConfig {
  std::filesystem::path service_dir;  ///< canonical
  std::string service;
  std::optional<std::vector<std::string>> file_access;  ///< absent: no file access
  /// false: no network; true: direct; a list: those hosts, through the jail's egress proxy
  std::variant<bool, std::vector<std::string>> network = false;
  /// The egress proxy of the jail ("127.0.0.1", port), when network is a list.
  std::string proxy_host = "127.0.0.1";
  std::uint16_t proxy_port = 0;
  std::uint64_t max_heap = 0;              ///< JSGC_MAX_BYTES; 0: the engine's default
  std::vector<std::string> subscriptions;  ///< the service's subscription endpoints
  std::size_t max_file_bytes =
      std::size_t{16} * 1024 * 1024;  ///< ctx.readFile / ctx.fetch body limit
};

struct CallRequest {
  std::uint64_t id = 0;
  std::string module;  ///< relative to the service folder
  std::string function;
  std::string endpoint;
  std::string input_json = "null";
  /// A mutation endpoint: the folders of the files the call touches are locked exclusively (else
  /// shared) until the call returns, so concurrent read-modify-write calls on other workers do not
  /// lose updates.
  bool mutation = false;
  /// Keep the module's realm for the next calls of the same module in this worker (a handler's
  /// `isolation: "worker"`): it is instantiated and evaluated once, and what the module keeps
  /// in its own variables survives between calls. A call that times out or fails while the
  /// module loads drops the kept realm. Default: a fresh realm and module instance per call.
  bool keep_state = false;
  std::chrono::milliseconds timeout{30000};
};

/// Source text to run as the body of a strict async function (`return` gives the value, `await`
/// works) in a fresh global that also holds one writable property per member of `globals_json`.
/// No `ctx`: the code reaches nothing but its globals, console and timers.
struct EvalRequest {
  std::uint64_t id = 0;
  std::string source;
  std::string filename = "script";  ///< names the source in errors and stacks (line 1: its first)
  std::string globals_json = "{}";  ///< a JSON object: global name -> value
  /// Trusted set-up run first in the same global as a classic (sloppy) script named
  /// `prelude_filename`: its top-level function declarations become globals. Empty: none.
  std::string prelude;
  std::string prelude_filename = "prelude";
  /// Pins every clock of the evaluation (Date.now, new Date(), Intl's default date) to this
  /// time, in milliseconds since the epoch; absent: the real clock.
  std::optional<double> clock_ms;
  /// Defines `ctx` with readFile (when the worker has file access) and fetch (when it has
  /// network access); false: the source reaches no file and no network.
  bool io = false;
  std::chrono::milliseconds timeout{30000};
};

struct Outcome {
  enum class Kind {
    kOk,
    kThrown,       ///< the function threw or its promise rejected (-32003)
    kPermission,   ///< an uncaught refusal of ctx.readFile/writeFile/fetch (-32001)
    kTimeout,      ///< stopped by the interrupt callback (-32002)
    kOutOfMemory,  ///< the heap limit was reached; the worker must be replaced (-32003)
    kConfig,       ///< the module or function cannot be loaded (-32003)
  };
  Kind kind = Kind::kOk;
  std::string value_json = "null";  ///< kOk: the result as JSON text
  std::string globals_json = "{}";  ///< kOk of evaluate(): the globals' final values, JSON text
  std::string message;
  std::string name;   ///< the error's name (Error, TypeError...)
  std::string stack;  ///< "fn@file:line:column" lines
  std::string file;   ///< relative to the service folder when the error was thrown there
  unsigned line = 0;
  unsigned column = 0;
};

/// Where a call's side output goes (the worker writes frames to the daemon).
struct CallSink {
  std::function<void(std::string_view level, std::string_view message)> log;
  std::function<void(std::string_view subscription, std::string_view data_json)> publish;
  /// Set: the call's ctx has invoke(capability, method, params). Gets the call as JSON text
  /// ({capability, method, params}) and returns the host's answer as JSON text ({result} or
  /// {error: {code, message, data}}); nullopt when the host cannot be reached.
  std::function<std::optional<std::string>(std::string_view call_json)> invoke;
};

class Engine {
 public:
  /// Initialises SpiderMonkey for this process (once) and creates the context. nullptr and
  /// `error` set on failure.
  static std::unique_ptr<Engine> create(WorkerConfig config, std::string& error);
  virtual ~Engine() = default;
  virtual Outcome call(const CallRequest& request, const CallSink& sink) = 0;
  /// Runs source text under the same limits as a call. A source that closes the function it is
  /// run in (`}); ...`) is refused as a SyntaxError.
  virtual Outcome evaluate(const EvalRequest& request, const CallSink& sink) = 0;
  /// Microseconds to create and drop one fresh global as calls get it (benchmark); with
  /// `eager_classes`, also initialising every standard class up front (what hearth avoids).
  virtual double measure_fresh_global(int iterations, bool eager_classes = false) = 0;
  /// For a worker with nothing to do: prepares the next isolated call of `module` (a fresh realm
  /// with hearth's globals, the module and its imports instantiated and linked in it, and its
  /// namespace made; none of the module's code runs). The next call takes it when it calls that
  /// module and none of the files it was made from has changed; it is used by that one call only,
  /// so calls stay as isolated as before. A call of another module drops it (and the next
  /// preparation is skipped, so a worker serving several modules does not prepare in vain each
  /// time).
  virtual void prepare(const std::string& module) = 0;
  /// The housekeeping of the last call or evaluation (a full garbage collection every so many),
  /// once its answer has gone: the caller does not wait for it. Call it after each.
  virtual void after_answer() = 0;
  /// Whether the next after_answer() collects garbage in full (milliseconds, not microseconds):
  /// asked before answering, so that the answer can say so.
  virtual bool full_collection_due() const = 0;
};

}  // namespace hearth::js
