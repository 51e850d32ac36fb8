#pragma once
/// The `evidence/*` JSON-RPC methods (docs/app-server.md, "App Server protocol"): exporting an
/// app's hash-chained evidence log.

#include "appserver/server.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::evidence {

/// Registers evidence/export. `server` must outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server);

}  // namespace hearth::methods::evidence
