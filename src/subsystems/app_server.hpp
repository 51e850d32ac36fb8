#pragma once
/// The App Server (docs/app-server.md): in-app agent tasks (`agentSession/*`) with the daemon's
/// default model server, on /rpc and on its own endpoint /app-server (and /app-server/ws).

#include <memory>

#include "appserver/server.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"

namespace hearth::subsystems {

class AppServer : public daemon::Component {
 public:
  static constexpr std::string_view kName = "app-server";
  static std::vector<std::string_view> dependencies() {
    return {"storage", "apps", "agents", "services", "registry", "workspaces"};
  }
  explicit AppServer(daemon::Context& context);
  ~AppServer() override;

  Status expose(daemon::Surface& surface) override;
  void stop() override;

 private:
  std::unique_ptr<appserver::AppServer> server_;  ///< null when it is not served
};

}  // namespace hearth::subsystems
