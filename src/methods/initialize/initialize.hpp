#pragma once
/// The App Server's handshake (docs/app-server.md, "App Server protocol"): `initialize` says who
/// the connection is (clientInfo) and `initialized` ends the handshake; every other App Server
/// method is refused on a connection before it.

#include "appserver/server.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::initialize {

/// Registers initialize and initialized. `server` must outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server);

}  // namespace hearth::methods::initialize
