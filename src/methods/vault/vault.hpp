#pragma once
/// The `vault/*` JSON-RPC methods (docs/a2s.md, "JSON-RPC"): managing the A2S vault - names and
/// metadata only: no method returns a stored value.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "a2s/exec/gateway.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::vault {

/// Registers vault/* on `dispatcher`. `gateway` (whose vault they manage) must outlive its use.
void add_methods(rpc::Dispatcher& dispatcher, hearth::a2s::Gateway& gateway);

/// "DOMAIN::NAME" or "global::NAME" split at the last "::"; nullopt when it has none.
std::optional<std::pair<std::string, std::string>> split_variable(std::string_view text);

}  // namespace hearth::methods::vault
