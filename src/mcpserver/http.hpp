#pragma once
/// MCP's Streamable HTTP transport (revision 2025-11-25) at /mcp on the daemon, behind the same
/// Host, Origin and token checks as /rpc (the token also as ?token=, for clients configured with
/// a URL only):
/// - POST: one JSON-RPC message. initialize opens a session (Mcp-Session-Id in the answer);
///   requests without a session id are served statelessly (no subscriptions, no GET stream).
///   Notifications and responses get 202. A tools/call asking for progress is answered as
///   server-sent events (progress notifications, then the response); everything else as JSON.
/// - GET with Mcp-Session-Id: the session's stream of server notifications (list_changed,
///   resources/updated, log messages), one at a time per session (409 for a second).
/// - DELETE with Mcp-Session-Id: ends the session.
/// An unknown or ended session id gets 404; an MCP-Protocol-Version hearth does not speak, 400.

#include <chrono>
#include <memory>

#include "common/result.hpp"
#include "mcpserver/server.hpp"
#include "net/routes.hpp"

namespace hearth::mcpserver {

struct HttpOptions {
  std::string path = "/mcp";
  /// A session unused this long (and with no GET stream open) is closed when another begins.
  std::chrono::seconds session_idle{3600};
  /// Sessions at most; beyond, the least recently used is closed.
  std::size_t max_sessions = 1000;
  /// Notifications kept for a session while no GET stream is open.
  std::size_t backlog = 256;
  /// A silent event stream sends a comment this often (a vanished peer is noticed).
  std::chrono::seconds keep_alive{15};
};

class HttpTransport;

/// Adds the /mcp route; the returned transport must outlive the server's connections.
Result<std::shared_ptr<HttpTransport>> add_http_route(net::Routes& routes, Server& server,
                                                      const HttpOptions& options = {});

}  // namespace hearth::mcpserver
