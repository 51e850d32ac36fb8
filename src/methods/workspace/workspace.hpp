#pragma once
/// The `workspace/*` JSON-RPC methods (docs/workspace.md, "JSON-RPC"), and the
/// LAVS services a workspace reaches through the daemon's host (side effects, sources).

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

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

/// Registers workspace/* on `dispatcher`. `workspaces` must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::workspace::Manager& workspaces);

}  // namespace hearth::methods::workspace
