#pragma once
/// `capability/list` on the App Server's own endpoint (/app-server, /app-server/ws): the
/// capabilities of the app a connection named, refused before the handshake like the App
/// Server's other methods. On /rpc, capability/* are the bridge's (capability.hpp).

#include "appserver/server.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::capability {

/// Registers capability/list. `server` must outlive their use.
void add_app_server_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server);

}  // namespace hearth::methods::capability
