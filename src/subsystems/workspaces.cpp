#include "subsystems/workspaces.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "subsystems/sandbox.hpp"
#include "subsystems/services.hpp"
#include "subsystems/storage.hpp"

namespace hearth::subsystems {
namespace asio = boost::asio;

Workspaces::Workspaces(daemon::Context& context) : context_(context) {
  auto& host = context.find<Services>().host();
  services_ = std::make_unique<methods::workspace::HostServices>(host);
  workspace::ManagerOptions options;
  options.database = context.state_dir() / "workspaces.db";
  options.engine = context.find<Storage>().engine();
  options.jail = context.find<Sandbox>().jail();
  // Eight threads on either engine: on PostgreSQL each holds a connection; on SQLite they share
  // one, and the writers among them that arrive at once commit as one group (one flush).
  store_calls_ = std::make_unique<BlockingExecutor>(8);
  auto manager = workspace::Manager::create(context.io().get_executor(), options, *store_calls_,
                                            services_.get());
  if (!manager.ok()) throw daemon::StartupError("workspaces: " + manager.error().message);
  manager_ = std::move(manager).value();
}

Workspaces::~Workspaces() = default;

Status Workspaces::expose(daemon::Surface& surface) {
  methods::workspace::add_methods(surface.rpc(), *manager_);
  return {};
}

void Workspaces::start() {
  const auto& dirs = context_.options().workspace_dirs;
  if (dirs.empty()) {
    opened_ = true;
    return;
  }
  asio::co_spawn(
      context_.io(),
      [this, dirs]() -> asio::awaitable<void> {
        for (const auto& dir : dirs) {
          auto ws = co_await manager_->open(dir);
          if (!ws.ok()) {
            spdlog::error("{}", ws.error().message);
            context_.fail(1);
            co_return;
          }
          for (const auto& note : ws.value()->notes()) {
            spdlog::warn("workspace {}: {}", ws.value()->name(), note);
          }
          names_.push_back(boost::json::string(ws.value()->name()));
        }
        opened_ = true;
      },
      asio::detached);
}

void Workspaces::describe(boost::json::object& ready) const {
  if (!context_.options().workspace_dirs.empty()) ready["workspaces"] = names_;
}

void Workspaces::stop() {
  manager_->shutdown();
}

}  // namespace hearth::subsystems
