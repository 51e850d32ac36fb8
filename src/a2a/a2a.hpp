#pragma once
/// hearth as an A2A agent (docs/mcp-server.md, "A2A"), in A2A 1.0 and, for older clients, 0.3:
/// - the Agent Card at /.well-known/agent-card.json, without the token (it holds no secret and
///   says which scheme the calls need): the 1.0 card for `A2A-Version: 1.0`, the 0.3 card (with
///   the 1.0 interfaces embedded) without the header; every query and mutation endpoint of the
///   services served is a skill;
/// - the JSON-RPC binding at /a2a: 0.3 methods (message/send, ...) without A2A-Version or with
///   0.3, 1.0 methods (SendMessage, ...) with 1.0, VersionNotSupportedError for another;
/// - the HTTP+JSON binding (1.0) below /a2a/: POST /a2a/message:send, GET /a2a/tasks/{id}, ...
/// A message runs as one LAVS call through the host's pipeline (validation, jail, audit): it
/// names its skill in `metadata.skillId` (or a data part {"skill", "input"}); its first data part
/// is the endpoint's input. The result comes back as the task's artifact (a data part). Tasks
/// live in memory (the last `max_tasks` finished ones, and those still running).

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>

#include "a2a/protocol.hpp"
#include "common/result.hpp"
#include "host/host.hpp"
#include "net/routes.hpp"

namespace hearth::a2a {

/// protocolVersion of the 0.3 card.
inline constexpr std::string_view kProtocolVersion03 = "0.3.0";
/// Where the JSON-RPC binding is, and below which the HTTP+JSON binding's paths are.
inline constexpr std::string_view kBasePath = "/a2a";
inline constexpr std::string_view kCardPath = "/.well-known/agent-card.json";

struct Options {
  std::string name = "hearth";
  std::string version;
  /// The daemon's base URL ("http://127.0.0.1:5555"): the interfaces' url is this + "/a2a".
  /// Asked for each card (the port is known once listening).
  std::function<std::string()> base_url;
  /// Finished tasks kept for GetTask and ListTasks; beyond, the oldest finished ones are
  /// forgotten (running ones are kept until they end).
  std::size_t max_tasks = 1000;
};

class Agent;

/// The card's supportedInterfaces: JSON-RPC 1.0 (preferred), HTTP+JSON 1.0, JSON-RPC 0.3.
json::array supported_interfaces(const std::string& base_url);

/// The Agent Card for the services `host` serves now, in `version`'s shape.
json::object agent_card(const host::Host& host, const Options& options, Version version);

/// Adds GET /.well-known/agent-card.json (open: Host and Origin checks only), POST /a2a and the
/// HTTP+JSON paths below /a2a/ (behind the token).
Result<std::shared_ptr<Agent>> add_routes(net::Routes& routes, host::Host& host,
                                          boost::asio::any_io_executor executor, Options options);

}  // namespace hearth::a2a
