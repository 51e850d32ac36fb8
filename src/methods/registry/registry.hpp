#pragma once
/// The `registry/*` JSON-RPC methods (docs/a2s.md, "JSON-RPC"): searching and reading the A2S
/// registry, and executing a capability through the gateway.

#include "a2s/exec/gateway.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::registry {

/// Registers registry/* on `dispatcher`. `gateway` must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::a2s::Gateway& gateway);

}  // namespace hearth::methods::registry
