#pragma once
/// The handler kinds this build runs, registered by their `type`: the one place that knows every
/// kind, above them all (a kind knows only the interfaces of handlers/handler.hpp).

#include <memory>

#include "handlers/handler.hpp"

namespace hearth::handlers {

/// The registry with every kind this build runs (script, function, http, mcp, a2s).
std::unique_ptr<Registry> make_builtin_registry(const KindOptions& options = {});

}  // namespace hearth::handlers
