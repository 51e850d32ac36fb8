#pragma once
/// The `workspace/*` and `agent/*` JSON-RPC methods (docs/workspace.md, "JSON-RPC"), and the
/// LAVS services a workspace reaches through the daemon's host (side effects, sources).

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "agent/loop.hpp"
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
                                                   json::value input, std::string actor) override;
  boost::asio::awaitable<Result<std::shared_ptr<void>>> subscribe(
      std::string service, std::string endpoint, json::value input,
      std::function<void(json::value)> on_item) override;

 private:
  host::Host& host_;
};

/// What agent/run needs besides the workspace.
struct AgentSettings {
  agent::ModelConfig model;     ///< the daemon's default model (base URL, model, streaming)
  std::string default_key_ref;  ///< vault variable of the default model's key; empty: none
  /// Reads a vault variable ("SCOPE::NAME") for a key given by reference; blocking.
  std::function<Result<std::string>(const std::string& ref)> read_key;
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
