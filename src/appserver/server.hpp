#pragma once
/// The App Server (docs/app-server.md): in-app agent tasks for installed Agent Apps, over the
/// daemon's JSON-RPC (`/rpc`, `/ws`). A connection says who it is (`initialize` with
/// clientInfo, then `initialized`) before anything else; then an app's session
/// (`agentSession/start`, `agentSession/read`) runs turns (`agentSession/turn/start`) in which a
/// model works with the capabilities the app is granted, as tools through the capability bridge,
/// and with the app's own tools (its backends' and its toolRefs) under the policy its operations
/// declare. A write waits for a person (`action.required`, then `agentSession/action/respond`); the
/// result is checked against the turn's output schema; every turn leaves evidence in the app's
/// log. Each event (`agentSession/event`) is stored with its session and numbered, so a client
/// that comes back reads what it missed; idempotency keys make retried starts and turns safe.
///
/// Its work runs on one thread of its own (the sessions, the store, the bridge calls); model
/// requests use the daemon's I/O threads.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/context.hpp"
#include "agent/model.hpp"
#include "agentapp/bridge/bridge.hpp"
#include "agentapp/store/store.hpp"
#include "appserver/store.hpp"
#include "appserver/tool_policy.hpp"
#include "rpc/session.hpp"

namespace hearth {
class BlockingExecutor;
}

namespace hearth::appserver {

/// A tool of the app's own: one it binds through its `toolRefs` (a LAVS endpoint, a registry
/// capability, a workspace's scripts), as the daemon serves it, or one its backend lists.
struct ToolBinding {
  std::string name;  ///< the tool's name for the model ([a-zA-Z0-9_-])
  std::string description;
  json::value parameters;  ///< JSON Schema of its arguments
  /// A call waits for the person's approval (a toolRef no operation declares).
  bool writes = true;
  std::string provider;  ///< "lavs", "registry", "workspace", "backend"
  std::string target;    ///< what it names there (a backend tool: SERVICE/TOOL)
  std::function<boost::asio::awaitable<Result<json::value>>(json::object arguments)> call;
  /// Set by the App Server: the policy the app declares for it (tool_policy.hpp).
  std::optional<ToolPolicy> policy;
  std::string package_hash;  ///< a backend tool: the package whose code runs it
};

/// The tools of an app's backends (agentapp/backend: `tools/list` and `tools/call` over their
/// stdio, as MCP servers answer them), as the daemon supervises them.
struct BackendTools {
  /// {tools: [{service, name, description, inputSchema, packageHash}], unavailable: [{service,
  /// reason}]}: starts what is not running yet.
  std::function<boost::asio::awaitable<json::object>(std::string app)> list;
  /// `tools/call` params ({name, arguments, _meta}) to the backend `service`: its result.
  std::function<boost::asio::awaitable<Result<json::value>>(std::string app, std::string service,
                                                            json::object params)>
      call;
};

/// Binds one toolRef ({key, provider, capability, ...}) of an app, or says why it cannot.
using ToolResolver = std::function<Result<ToolBinding>(const json::object& tool_ref)>;

struct Options {
  /// The model turns use; an empty base_url: turns are refused with the setup to do.
  agent::ModelConfig model;
  /// The model's API key, read when a turn starts (blocking); empty function: none.
  std::function<Result<std::string>()> model_key;
  int max_steps = 16;    ///< model requests in one turn
  int max_failures = 3;  ///< replies in a row without a usable tool call or result
  /// What one model request carries (agent/context.hpp): earlier turns of the session and
  /// older tool results are elided or left out past it.
  agent::ContextBudget context;
  /// Earlier turns of a session (and of the one it forked) given to the model, newest kept.
  std::size_t max_history_turns = 20;
  /// The app's toolRefs as tools; unset: only the capability bridge's tools.
  ToolResolver resolve_tool;
  /// The app's backend tools; unset: none.
  BackendTools backend_tools;
  /// The daemons sharing the database (a shared storage engine): each event stored here is
  /// told to them, and the events they store reach this daemon's listeners. Null: none.
  std::shared_ptr<storage::Engine> engine;
  /// Where a turn's capability calls run, each in its app's lane (BlockingExecutor::run_in), so
  /// that one app's database query holds neither the server's thread nor another app's turn.
  /// Null: on the server's thread.
  BlockingExecutor* bridge_calls = nullptr;
};

class AppServer {
 public:
  /// `apps` and `bridge` must outlive the server; `io` runs the model requests.
  AppServer(const boost::asio::any_io_executor& io, agentapp::AppStore& apps,
            agentapp::Bridge& bridge, std::unique_ptr<Store> store, Options options);
  ~AppServer();
  AppServer(const AppServer&) = delete;
  AppServer& operator=(const AppServer&) = delete;

  /// What it serves (registered by src/methods/: initialize/, agentSession/, artifact/,
  /// evidence/, and capability/ for its own endpoint's capability/list).
  enum class Method {
    kInitialize,      ///< initialize: who the connection is
    kInitialized,     ///< initialized: the handshake is over
    kStart,           ///< agentSession/start
    kRead,            ///< agentSession/read
    kTurnStart,       ///< agentSession/turn/start
    kTurnCancel,      ///< agentSession/turn/cancel
    kActionRespond,   ///< agentSession/action/respond
    kArtifactRead,    ///< artifact/read
    kEvidenceExport,  ///< evidence/export
    kCapabilityList,  ///< capability/list on /app-server, refused before the handshake
  };
  /// Runs `method` on the server's own thread: params as the request gave them, the session
  /// whose handshake (and pushes) it is.
  boost::asio::awaitable<Result<json::value>> call(Method method, json::value params,
                                                   const std::shared_ptr<rpc::Session>& session);

  /// Cancels the running turns and stops the server's thread. Idempotent.
  void stop();

  /// The version of the protocol in initialize's answer.
  static constexpr std::string_view kProtocolVersion = "1.0";

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace hearth::appserver
