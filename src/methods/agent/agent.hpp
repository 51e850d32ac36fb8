#pragma once
/// The `agent/*` JSON-RPC methods (docs/workspace.md, "Agent runs"): a model working in a
/// workspace (agent/run), its events, agent/cancel and agent/read.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "agent/loop.hpp"
#include "agent/servers.hpp"
#include "common/blocking.hpp"
#include "rpc/dispatcher.hpp"
#include "workspace/manager.hpp"

namespace hearth::methods::agent {

/// What agent/run needs besides the workspace.
struct AgentSettings {
  hearth::agent::ModelServers servers;   ///< the configured model servers, the default first
  hearth::agent::ModelConfig limits;     ///< what every run shares (time limits, answer size)
  hearth::agent::ContextBudget context;  ///< what one request to the model may carry
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
  std::shared_ptr<hearth::agent::Run> find(const std::string& id) const;
  void add(std::shared_ptr<hearth::agent::Run> run);
  void cancel_all();

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<hearth::agent::Run>> runs_;
  std::vector<std::string> order_;
};

/// Registers agent/* on `dispatcher`. Everything given must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::workspace::Manager& workspaces,
                 AgentSettings& settings, Runs& runs);

}  // namespace hearth::methods::agent
