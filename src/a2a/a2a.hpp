#pragma once
/// hearth as an A2A agent (docs/a2a.md): the Agent Card at /.well-known/agent-card.json lists every
/// query and mutation endpoint of the services served as a skill, and the JSON-RPC binding at
/// /a2a (A2A protocol 0.3: message/send, message/stream, tasks/get, tasks/cancel) runs a message
/// as one LAVS call through the host's pipeline (validation, jail, audit). A message names its
/// skill in `metadata.skillId` (or a data part {"skill", "input"}); its first data part is the
/// endpoint's input. The result comes back as the task's artifact (a data part).

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "host/host.hpp"
#include "net/routes.hpp"

namespace hearth::a2a {

inline constexpr std::string_view kProtocolVersion = "0.3.0";

struct Options {
  std::string name = "hearth";
  std::string version;
  /// The daemon's base URL ("http://127.0.0.1:5555"): the card's url is this + "/a2a". Asked for
  /// each card (the port is known once listening).
  std::function<std::string()> base_url;
  /// Tasks kept for tasks/get; beyond, the oldest finished ones are forgotten.
  std::size_t max_tasks = 1000;
};

class Agent;

/// The Agent Card for the services `host` serves now.
json::object agent_card(const host::Host& host, const Options& options);

/// Adds GET /.well-known/agent-card.json and POST /a2a (both behind the token).
Result<std::shared_ptr<Agent>> add_routes(net::Routes& routes, host::Host& host,
                                          boost::asio::any_io_executor executor, Options options);

}  // namespace hearth::a2a
