#pragma once
/// The `workspace/*` and `agent/*` JSON-RPC methods (docs/workspace.md, "JSON-RPC"), and the
/// LAVS services a workspace reaches through the daemon's host (side effects, sources).

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "agent/loop.hpp"
#include "agent/servers.hpp"
#include "host/host.hpp"
#include "rpc/dispatcher.hpp"
#include "workspace/manager.hpp"

namespace hearth::methods::workspace {

/// workspace::Services over the daemon's host: calls go through the normal pipeline (input and
/// output schemas, permissions, the jail) and are audited with the workspace as their client.
class HostServices : public hearth::workspace::Services {
 public:
  explicit HostServices(host::Host& host) : host_(host) {}
  boost::asio::awaitable<Result<json::value>> call(std::string service, std::string endpoint,
                                                   json::value input, std::string actor,
                                                   bool confidential) override;
  boost::asio::awaitable<Result<std::shared_ptr<void>>> subscribe(
      std::string service, std::string endpoint, json::value input,
      std::function<void(json::value)> on_item) override;

 private:
  host::Host& host_;
};

/// What agent/run needs besides the workspace.
struct AgentSettings {
  agent::ModelServers servers;   ///< the configured model servers, the default first
  agent::ModelConfig limits;     ///< what every run shares (time limits, answer size)
  agent::ContextBudget context;  ///< what one request to the model may carry
  /// Reads a vault variable ("SCOPE::NAME") holding a model key; blocking. `domain` empty: the
  /// chosen server's configured key, read as it is; otherwise the vault's rule decides whether
  /// the variable may go to that domain (agent/servers.hpp).
  std::function<Result<std::string>(const std::string& ref, const std::string& domain)> read_key;
  std::filesystem::path transcripts;   ///< where run transcripts go (STATE_DIR/agent)
  BlockingExecutor* writer = nullptr;  ///< writes transcripts, in order (one thread)
};

/// The agent runs a daemon started (agent/run), kept for agent/read after they end.
class Runs {
 public:
  std::shared_ptr<agent::Run> find(const std::string& id) const;
  void add(std::shared_ptr<agent::Run> run);
  void cancel_all();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<agent::Run>> runs_;
  std::vector<std::string> order_;
};

/// Registers workspace/* and agent/* on `dispatcher`. Everything given must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::workspace::Manager& workspaces,
                 AgentSettings& agent, Runs& runs);

}  // namespace hearth::methods::workspace
