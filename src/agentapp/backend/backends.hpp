#pragma once
/// The app backend supervisor (docs/agent-apps.md, "App backends"): runs the `app-backend`
/// services of every enabled app that hearth runs (client-local, stdio-jsonrpc; see
/// services.hpp) as jailed child processes, and keeps them running.
///
/// - Nothing starts for an app that is not enabled. A poll of the app store (every `poll`)
///   starts what an enable added and stops what a disable, an uninstall, an upgrade or a
///   rollback removed; a call to a backend that is not running yet starts it at once.
/// - Each process runs under the jail: no file beyond its package (read-only), the system's
///   programs and a scratch /tmp; no network unless the service says remote-allowed, then only
///   the hosts of the app's network permissions; its memory limit from resourceLimits.memoryMb.
///   Its environment is made for it, never the daemon's. Without a jail nothing is started.
/// - Its only way out is its stdio: JSON-RPC 2.0, one message a line. hearth sends `initialize`
///   and then the calls made to it (`app/backend/call`); the backend may send `capability/invoke`
///   and `capability/list`, which go through the capability bridge as its own app (a call naming
///   another app is refused), with `caller` "backend:<key>" in the evidence.
/// - Worker services declaring a JavaScript runtime and workflows whose entry is a JavaScript
///   module run in JS workers (a pool of one per unit, made at its first call, under the jail
///   with the package readable): `app/backend/call` with the unit's key runs an exported
///   function; its ctx.invoke goes through the bridge as the app ("worker:<key>").
/// - A backend that exits, fails to start or does not answer `initialize` is started again after
///   a delay that doubles from `backoff_initial` to `backoff_max`; a run of `stable_after` resets
///   it. One that does not come up is `failing` (status, and a report in the store that
///   `hearth app show` and its readiness read, with the end of its stderr); its failures are
///   logged and evidenced once, then only when the reason changes or `log_summary_every`
///   passed. Starts, exits of running backends and stops are logged and evidenced.
/// - After `initialize` hearth asks for the backend's tools (`tools/list`, as MCP servers
///   answer it; -32601: none) for the App Server's turns, which call them with `tools/call`.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "agentapp/bridge/bridge.hpp"
#include "agentapp/store/store.hpp"
#include "common/blocking.hpp"
#include "common/result.hpp"
#include "jail/jail.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

struct BackendOptions {
  /// Every backend runs under it; null: no backend is started (each says why).
  std::shared_ptr<const jail::Jail> jail;
  std::chrono::milliseconds poll{1000};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30'000};
  std::chrono::milliseconds stable_after{30'000};
  std::chrono::milliseconds start_timeout{10'000};  ///< for the answer to `initialize`
  /// How often a backend that keeps failing the same way is logged again (with the count).
  std::chrono::milliseconds log_summary_every{600'000};
  std::size_t max_message = std::size_t{16} << 20;  ///< bytes a line, either way
  std::size_t max_inflight = 32;                    ///< a backend's own requests waiting at once
  /// The hearth-js-worker program for worker and workflow modules; empty: the one beside the
  /// running executable.
  std::filesystem::path js_worker;
};

class Backends {
 public:
  /// `store`, `bridge` and `blocking` (where the store is read and the bridge runs) must outlive
  /// the supervisor.
  static std::shared_ptr<Backends> create(const boost::asio::any_io_executor& executor,
                                          AppStore& store, Bridge& bridge,
                                          BlockingExecutor& blocking, BackendOptions options);
  ~Backends();
  Backends(const Backends&) = delete;
  Backends& operator=(const Backends&) = delete;

  /// Starts supervising: the first poll runs at once.
  void start();
  /// Stops every backend (their process groups are killed) and the poll; nothing starts again.
  /// With `wait`, returns once they are stopped; without, from a thread of the executor (the
  /// daemon's shutdown), leaves it to the strand. Idempotent, any thread.
  void stop(bool wait = true);

  /// Calls `method` of the app's backend `service` (empty: the app's only backend) with
  /// `params` and returns its result, within the service's timeoutMs. For a worker or workflow
  /// module (`service` its key), `method` is the exported function run in a JS worker with
  /// (params, ctx); ctx.invoke reaches the bridge as the app. The backend's own error
  /// comes back with its code in data.code (-32003 on the wire); a backend that is not running
  /// answers why (not enabled, not run by hearth, restarting after a crash, and when).
  boost::asio::awaitable<Result<json::value>> call(std::string app, std::string service,
                                                   std::string method, json::value params);

  /// The tools the app's backends list (`tools/list`, MCP's shape, asked after `initialize`),
  /// starting those that are not running yet (within start_timeout): {tools: [{service, name,
  /// description, inputSchema, packageHash}], unavailable: [{service, reason, state,
  /// stderrTail?}]}. A backend that answers tools/list with -32601 has none. A tool is called
  /// with call(app, service, "tools/call", {name, arguments}).
  boost::asio::awaitable<json::object> tools(std::string app);

  /// The backends hearth supervises (of `app`, or all when empty): appId, service, state
  /// (starting | running | restarting | failing | stopped), pid, starts, since, lastExit,
  /// tools (their names, once listed); while restarting or failing nextStartInMs, reason,
  /// failures (starts in a row that did not come up) and stderrTail.
  boost::asio::awaitable<json::array> status(std::string app);

  struct Entry;
  struct JsEntry;
  struct State;

 private:
  Backends() = default;
  std::shared_ptr<State> state_;
};

}  // namespace hearth::agentapp
