#pragma once
/// mcp-config.json (lavs-spec-v1 section 9.3): the MCP servers a service's `mcp` endpoints call, in
/// the shape MCP clients already use:
///
///   {"mcpServers": {
///      "files":  {"command": "node", "args": ["node_modules/x/dist/index.js", "data"],
///                 "env": {"LOG_LEVEL": "warn"}, "cwd": "."},
///      "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer
///      …"}}}}
///
/// A server with `command` speaks MCP over stdio (newline-delimited JSON-RPC); one with `url`
/// over Streamable HTTP. A `type` member, when present, must agree ("stdio"; "http" or
/// "streamable-http"); "sse" (the deprecated HTTP+SSE transport) is refused by name. Unknown
/// members are ignored, as other clients do. Every problem is reported with its JSON path.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/problem.hpp"
#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::mcp {

struct StdioServer {
  std::string command;  ///< a name searched in the server's PATH, or a path (relative to cwd)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  ///< on top of hearth's base environment
  std::string cwd = ".";  ///< relative to the service folder, and inside it
};

struct HttpServer {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ServerConfig {
  std::string name;
  std::variant<StdioServer, HttpServer> transport;
  bool stdio() const { return std::holds_alternative<StdioServer>(transport); }
};

struct Config {
  std::vector<ServerConfig> servers;  ///< in document order
  const ServerConfig* find(std::string_view name) const;
  /// "a, b, c" (or "none") for messages.
  std::string names() const;
};

inline constexpr std::string_view kConfigFile = "mcp-config.json";

/// Checks a parsed mcp-config.json; appends every problem (paths like "mcpServers.files.args[1]").
Config parse_config(const json::value& document, Problems& problems);

/// Reads `<service_dir>/mcp-config.json`. A missing file is an empty configuration; an
/// unreadable or invalid one is kInvalidParams whose message lists the problems.
Result<Config> load_config(const std::filesystem::path& service_dir);

}  // namespace hearth::mcp
