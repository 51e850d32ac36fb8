#pragma once
/// The `registry/*` and `vault/*` JSON-RPC methods (docs/a2s.md, "JSON-RPC"): searching and
/// reading the A2S registry, executing a capability, and managing the vault (names and metadata
/// only: no method returns a stored value).

#include "a2s/exec/gateway.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::a2s {

/// Registers registry/* and vault/* on `dispatcher`. `gateway` must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::a2s::Gateway& gateway);

/// "DOMAIN::NAME" or "global::NAME" split at the last "::"; nullopt when it has none.
std::optional<std::pair<std::string, std::string>> split_variable(std::string_view text);

}  // namespace hearth::methods::a2s
