#pragma once
/// The `agentSession/*` JSON-RPC methods (docs/app-server.md): an app's sessions and their
/// turns, approvals and numbered events, run by the App Server.

#include "appserver/server.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::agent_session {

/// Registers agentSession/start, read, turn/start, turn/cancel and action/respond. `server` must
/// outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server);

}  // namespace hearth::methods::agent_session
