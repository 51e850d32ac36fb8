#include "subsystems/app_server.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>

#include "methods/agentSession/agent_session.hpp"
#include "methods/artifact/artifact.hpp"
#include "methods/capability/app_server.hpp"
#include "methods/evidence/evidence.hpp"
#include "methods/initialize/initialize.hpp"
#include "subsystems/agents.hpp"
#include "subsystems/app_tools.hpp"
#include "subsystems/apps.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/services.hpp"
#include "subsystems/storage.hpp"
#include "subsystems/workspaces.hpp"

namespace hearth::subsystems {

AppServer::AppServer(daemon::Context& context) {
  auto& apps = context.find<Apps>();
  if (!apps.available()) return;
  // This daemon's turns are the ones it starts: named by the machine and the state dir, which
  // one daemon holds at a time, so a daemon that starts again finds the turns it left.
  std::array<char, 256> host{};
  ::gethostname(host.data(), host.size() - 1);
  std::error_code ec;
  auto dir = std::filesystem::weakly_canonical(context.state_dir(), ec);
  if (ec) dir = context.state_dir();
  const std::string daemon_id = std::string(host.data()) + ":" + dir.string();
  auto& engine = context.find<Storage>().engine();
  auto sessions =
      appserver::Store::open(*engine, context.state_dir() / "apps" / "app-server.db", daemon_id);
  if (!sessions.ok()) {
    spdlog::error("the App Server is not served: {}", sessions.error().message);
    return;
  }
  auto& agent = context.find<Agents>().settings();
  appserver::Options options;
  // The default model server, with its own key.
  if (auto model = agent.servers.resolve({}, agent.limits); model.ok()) {
    options.model = model->config;
    if (!model->key_ref.empty()) {
      options.model_key = [&agent, ref = model->key_ref] { return agent.read_key(ref, ""); };
    }
  }
  options.context = agent.context;
  options.resolve_tool =
      app_tool_resolver(context.find<Services>().host(), *context.find<Registry>().gateway(),
                        context.find<Workspaces>().manager());
  options.backend_tools = app_backend_tools(apps.backends());
  options.engine = engine;
  options.bridge_calls = &apps.calls();
  server_ = std::make_unique<appserver::AppServer>(context.io().get_executor(), apps.store(),
                                                   apps.bridge(), std::move(sessions).value(),
                                                   std::move(options));
}

AppServer::~AppServer() = default;

Status AppServer::expose(daemon::Surface& surface) {
  if (!server_) return {};
  // On /rpc beside the daemon's other methods, and on an endpoint of its own, which serves
  // nothing else (and capability/list for the app a connection named).
  auto add = [this](rpc::Dispatcher& dispatcher) {
    methods::initialize::add_methods(dispatcher, *server_);
    methods::agent_session::add_methods(dispatcher, *server_);
    methods::artifact::add_methods(dispatcher, *server_);
    methods::evidence::add_methods(dispatcher, *server_);
  };
  add(surface.rpc());
  auto& own = surface.endpoint("/app-server", "/app-server/ws");
  add(own);
  methods::capability::add_app_server_methods(own, *server_);
  return {};
}

void AppServer::stop() {
  if (server_) server_->stop();
}

}  // namespace hearth::subsystems
