#pragma once
/// The `artifact/*` JSON-RPC methods (docs/app-server.md, "App Server protocol"): reading an
/// artifact a session's turns made.

#include "appserver/server.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::artifact {

/// Registers artifact/read. `server` must outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server);

}  // namespace hearth::methods::artifact
