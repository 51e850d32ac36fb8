#pragma once
/// The `view/*` JSON-RPC methods (docs/view-host.md): mounting a service's view component for
/// the host page, and the calls a mounted view makes, bound to its mount's service. WebSocket
/// only: a mount lives as long as the connection that opened it.

#include "host/host.hpp"
#include "rpc/dispatcher.hpp"
#include "views/views.hpp"

namespace hearth::methods::view {

/// Registers the view/* methods on `dispatcher`. `host` and `views` must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, host::Host& host, views::ViewHost& views);

}  // namespace hearth::methods::view
