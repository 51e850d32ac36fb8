#pragma once
/// The `mcp` handler kind (lavs-spec-v1 sections 4.3, 8.3, 9.1, 9.3): an endpoint that calls a
/// tool of an MCP server configured in the service's mcp-config.json (see mcp/config.hpp).
///
/// Handler object:
///   server           string, required  a server named in mcp-config.json (checked at load)
///   tool             string, required  the tool to call; the endpoint's input is its arguments
///   timeout          number >= 0 (ms)  how long the server may stay silent: each progress
///                                      notification for the call starts it again (default: the
///                                      endpoint's time limit); capped by maxExecutionTime
///   maxTotalTimeout  number >= 0 (ms)  a limit on the whole call, progress or not (default:
///                                      maxExecutionTime when declared, else none)
///
/// The result is the tool's `structuredContent` when it has one, else its `content` blocks;
/// `isError: true` is -32003 with the text of the result. The whole contract - server lifetime,
/// permissions, errors - is in docs/protocol.md ("mcp handlers").
///
/// Servers: one session per server and effective permission set (a stdio server's jail is made
/// from the permissions), started at the first call that needs it, kept between calls, started
/// again at the next call after it ended, stopped with the daemon (Kind::shutdown).

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "handlers/handler.hpp"
#include "mcp/config.hpp"
#include "mcp/session.hpp"

namespace hearth::handlers::mcp {

/// The mcp kind, to register under "mcp".
std::unique_ptr<Kind> make_kind(const KindOptions& options);

/// What one configured server offers (`hearth mcp tools`).
struct ServerTools {
  std::string name;
  std::string transport;  ///< "stdio" or "http"
  std::string protocol_version;
  json::object server_info;
  Result<std::vector<hearth::mcp::Tool>> tools = std::vector<hearth::mcp::Tool>{};
};

/// Starts every server of `config` (a stdio server under the jail of `permissions_of(name)`),
/// lists its tools and stops it again. Each server gets `timeout` to start and answer.
boost::asio::awaitable<std::vector<ServerTools>> list_tools(
    boost::asio::any_io_executor executor, const KindOptions& options, std::string service,
    std::filesystem::path service_dir, hearth::mcp::Config config,
    std::function<manifest::Permissions(const std::string& server)> permissions_of,
    std::chrono::milliseconds timeout);

}  // namespace hearth::handlers::mcp
