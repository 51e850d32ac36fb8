#pragma once
/// The `app/backend/*` JSON-RPC methods (docs/agent-apps.md, "App backends"): a call to an
/// enabled app's backend (`app/backend/call`) and the supervisor's view of them
/// (`app/backend/status`).

#include <string>

#include "agentapp/backend/backends.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::app {

/// Registers app/backend/call and app/backend/status. `backends` must outlive their use.
void add_backend_methods(rpc::Dispatcher& dispatcher, agentapp::Backends& backends);

/// When the app store cannot be opened: app/backend/* answer -32603 with `reason`.
void add_backend_unavailable(rpc::Dispatcher& dispatcher, const std::string& reason);

}  // namespace hearth::methods::app
