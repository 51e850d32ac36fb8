#pragma once
/// The Agent App methods (docs/agent-apps.md, "The capability bridge"): `capability/invoke` and
/// `capability/list`, and the app backends' `app/backend/call` and `app/backend/status`, served by
/// the daemon for app backends and, through the view host, app UIs.

#include "agentapp/backend/backends.hpp"
#include "agentapp/bridge/bridge.hpp"
#include "common/blocking.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::methods::apps {

/// Registers capability/invoke and capability/list, and app/backend/call and app/backend/status
/// (the app backends hearth supervises). `bridge`, `backends` and `blocking` (where the app
/// databases are opened and queried) must outlive their use.
void add_methods(rpc::Dispatcher& dispatcher, agentapp::Bridge& bridge,
                 agentapp::Backends& backends, BlockingExecutor& blocking);

/// When the app store cannot be opened: capability/* and app/backend/* answer -32603 with
/// `reason`.
void add_unavailable(rpc::Dispatcher& dispatcher, const std::string& reason);

}  // namespace hearth::methods::apps
