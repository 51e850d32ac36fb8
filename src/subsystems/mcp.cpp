#include "subsystems/mcp.hpp"

#include "subsystems/services.hpp"
#include "subsystems/views.hpp"
#include "subsystems/workspaces.hpp"

namespace hearth::subsystems {

McpServer::McpServer(daemon::Context& context) {
  mcpserver::Options options;
  options.version = HEARTH_VERSION;
  options.cdn_origins = context.find<Views>().cdn_origins();
  options.progress_interval = std::chrono::milliseconds(context.options().mcp_progress_interval_ms);
  options.workspaces = &context.find<Workspaces>().manager();
  auto& services = context.find<Services>();
  server_ = std::make_unique<mcpserver::Server>(services.host(), context.io().get_executor(),
                                                std::move(options));
  services.on_reload([server = server_.get()](const host::ReloadReport& reload) {
    server->services_changed(changed_services(reload));
  });
}

McpServer::~McpServer() = default;

Status McpServer::expose(daemon::Surface& surface) {
  HEARTH_ASSIGN_OR_RETURN(http_, mcpserver::add_http_route(surface.routes(), *server_));
  return {};
}

void McpServer::stop() {
  server_->close_all();
}

}  // namespace hearth::subsystems
