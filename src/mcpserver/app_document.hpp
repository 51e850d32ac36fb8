#pragma once
/// A service's view as an MCP Apps resource (`ui://<service>/view`, text/html;profile=mcp-app):
/// one self-contained HTML document the MCP host renders in its own sandbox. The bridge script
/// (app_bridge.js) speaks MCP Apps to the host (the handshake, requests through the host, answers
/// to the host's requests, its notifications, size reports) and gives the view component the LAVS
/// client it expects (call, subscribe, getManifest, readFile), so the same component runs in
/// hearth's view host and in an MCP host. Module components (local .js, inline, npm) are bundled
/// into the document with their imports (views/bundle.hpp); a cdn module is imported from its
/// origin. Nothing in the document needs more of the host's sandbox than `allow-scripts`.

#include <map>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "host/host.hpp"

namespace hearth::mcpserver {

/// An endpoint of the service as the bridge calls it.
struct AppTool {
  std::string name;         ///< its tool name, as tools/list gives it
  bool mutation = false;    ///< a host's result of it is told to the view as an agent action
  bool wrap_input = false;  ///< its input travels as the argument "input"
};

struct AppDocument {
  std::string html;
  /// Origins the document loads scripts from (a cdn component): the host's CSP must allow them.
  std::vector<std::string> resource_domains;
};

/// Builds the document of `service`'s view. Blocking (reads the component's files). Errors
/// (-32602 or, for a cdn origin not allowed, -32001): the component cannot be resolved (as the
/// view host says), or its modules cannot be bundled (views::bundle_modules says why). `tools`:
/// the service's query and mutation endpoints by id.
Result<AppDocument> app_document(const host::Host::Service& service,
                                 const std::vector<std::string>& cdn_origins,
                                 const std::map<std::string, AppTool, std::less<>>& tools);

}  // namespace hearth::mcpserver
