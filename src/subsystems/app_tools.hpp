#pragma once
/// The tools an Agent App binds through its `toolRefs` (docs/app-server.md, "Tools"), resolved
/// against what this daemon serves: provider `lavs` (a service's query or mutation endpoint,
/// capability "SERVICE.ENDPOINT"), `registry` (an A2S capability, "SERVICE/CAPABILITY") and
/// `workspace` (scripts in a virtual workspace, "WORKSPACE_ID"); and the tools its backends
/// list, called through the supervisor.

#include <memory>

#include "a2s/exec/gateway.hpp"
#include "agentapp/backend/backends.hpp"
#include "appserver/server.hpp"
#include "host/host.hpp"
#include "workspace/manager.hpp"

namespace hearth::subsystems {

/// Everything given must outlive the resolver and the tools it binds.
appserver::ToolResolver app_tool_resolver(host::Host& host, a2s::Gateway& gateway,
                                          workspace::Manager& workspaces);

/// The app backends' tools (tools/list, tools/call) through the supervisor.
appserver::BackendTools app_backend_tools(const std::shared_ptr<agentapp::Backends>& backends);

}  // namespace hearth::subsystems
