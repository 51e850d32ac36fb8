#pragma once
/// A service's view as an MCP Apps resource (`ui://<service>/view`, text/html;profile=mcp-app):
/// one self-contained HTML document the MCP host renders in its own sandbox. A small bridge
/// script speaks the MCP Apps protocol to the host (ui/initialize, then tools/call through the
/// host) and gives the view component the LAVS client it expects (call, subscribe, getManifest,
/// readFile), so the same component runs in hearth's view host and in an MCP host.

#include <string>
#include <vector>

#include "common/result.hpp"
#include "host/host.hpp"

namespace hearth::mcpserver {

struct AppDocument {
  std::string html;
  /// Origins the document loads scripts from (a cdn component): the host's CSP must allow them.
  std::vector<std::string> resource_domains;
};

/// Builds the document of `service`'s view. Blocking (reads the component's file). Errors: the
/// component cannot be resolved (as the view host says), or it is an npm package (its module
/// graph is not one file: served by hearth's view host only). `tool_names`: the service's
/// endpoint ids -> their tool names (as tools/list gives them), what the bridge calls.
Result<AppDocument> app_document(const host::Host::Service& service,
                                 const std::vector<std::string>& cdn_origins,
                                 const json::object& tool_names);

}  // namespace hearth::mcpserver
