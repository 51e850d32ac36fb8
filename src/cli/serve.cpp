// `hearth serve`: the daemon as a list of its components (src/subsystems/), started in
// dependency order and stopped in reverse by daemon::Daemon (docs/architecture.md,
// "Components and their lifecycle"). A new subsystem is one component and one line here.
#include <spdlog/spdlog.h>

#include <iostream>
#include <thread>

#include "cli/common.hpp"
#include "cli/remote.hpp"
#include "daemon/daemon.hpp"
#include "subsystems/a2a.hpp"
#include "subsystems/agents.hpp"
#include "subsystems/app_server.hpp"
#include "subsystems/app_ui.hpp"
#include "subsystems/apps.hpp"
#include "subsystems/audit.hpp"
#include "subsystems/mcp.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/sandbox.hpp"
#include "subsystems/services.hpp"
#include "subsystems/storage.hpp"
#include "subsystems/views.hpp"
#include "subsystems/workspaces.hpp"

namespace hearth::cli {

namespace {

/// The banner (or the ready document with --json), and the browser of --open.
void announce(const ServeOptions& options, const json::object& ready, const std::string& token) {
  const std::string url(ready.at("url").as_string());
  if (options.json) {
    std::cout << json::dump(ready) << std::endl;
  } else {
    const auto& services = ready.at("services").as_array();
    std::cout << "hearth " << HEARTH_VERSION << " serving " << services.size() << " service(s) on "
              << url << "\n"
              << "  JSON-RPC: POST " << url
              << "/rpc   WebSocket: " << ready.at("wsUrl").as_string().c_str()
              << "\n  token file: " << ready.at("tokenFile").as_string().c_str() << "\n  services:";
    for (const auto& s : services) std::cout << " " << s.as_string().c_str();
    std::cout << "\n  open the view host: " << url << "/ui/#token=" << token;
    const auto path_of = [&ready](std::string_view key) {
      const auto* v = ready.if_contains(key);
      return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    std::cout << "\n  log: " << path_of("logFile") << "   audit log: " << path_of("auditLog")
              << "\n  `hearth status`, `hearth logs -f`, `hearth stop` (from another terminal)"
              << std::endl;
  }
  if (options.open) {
    // xdg-open may wait for the browser: never on an I/O thread.
    std::thread([page = url + "/ui/#token=" + token] {
      if (!launch_browser(page)) spdlog::warn("--open: xdg-open could not open a browser");
    }).detach();
  }
}

}  // namespace

int serve(const ServeOptions& options) {
  daemon::Daemon daemon(options);
  daemon.add<subsystems::Storage>();
  daemon.add<subsystems::Sandbox>();
  daemon.add<subsystems::Audit>();
  daemon.add<subsystems::Registry>();
  daemon.add<subsystems::Services>();
  daemon.add<subsystems::Views>();
  daemon.add<subsystems::Workspaces>();
  daemon.add<subsystems::Agents>();
  daemon.add<subsystems::McpServer>();
  daemon.add<subsystems::A2aAgent>();
  daemon.add<subsystems::Apps>();
  daemon.add<subsystems::AppUi>();
  daemon.add<subsystems::AppServer>();
  daemon.on_ready([&options](const json::object& ready, const std::string& token) {
    announce(options, ready, token);
  });
  return daemon.run();
}

}  // namespace hearth::cli
