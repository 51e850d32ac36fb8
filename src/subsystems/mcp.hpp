#pragma once
/// hearth as an MCP server at /mcp (Streamable HTTP): the same tools and resources as
/// `hearth mcp serve` over stdio, workspaces included; told of reloads (list_changed).

#include <memory>

#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "mcpserver/http.hpp"
#include "mcpserver/server.hpp"

namespace hearth::subsystems {

class McpServer : public daemon::Component {
 public:
  static constexpr std::string_view kName = "mcp";
  static std::vector<std::string_view> dependencies() {
    return {"services", "views", "workspaces"};
  }
  explicit McpServer(daemon::Context& context);
  ~McpServer() override;

  Status expose(daemon::Surface& surface) override;
  void stop() override;

 private:
  std::unique_ptr<mcpserver::Server> server_;
  std::shared_ptr<mcpserver::HttpTransport> http_;
};

}  // namespace hearth::subsystems
