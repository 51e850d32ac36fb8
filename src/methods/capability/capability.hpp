#pragma once
/// The `capability/*` JSON-RPC methods (docs/agent-apps.md, "The capability bridge"):
/// `capability/invoke` and `capability/list` through the bridge, for app backends and tools.
/// (`capability/list` on the App Server's own endpoint is app_server.hpp's.)

#include <string>

#include "agentapp/bridge/bridge.hpp"
#include "common/blocking.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::capability {

/// Registers capability/invoke and capability/list. `bridge` and `blocking` (where the app
/// databases are opened and queried) must outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, agentapp::Bridge& bridge, BlockingExecutor& blocking);

/// When the app store cannot be opened: capability/* answer -32603 with `reason`.
void add_unavailable(rpc::Dispatcher& dispatcher, const std::string& reason);

}  // namespace hearth::methods::capability
