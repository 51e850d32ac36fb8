#pragma once
/// The tools an Agent App binds through its `toolRefs` (docs/app-server.md, "Tools"), resolved
/// against what this daemon serves: provider `lavs` (a service's query or mutation endpoint,
/// capability "SERVICE.ENDPOINT"), `registry` (an A2S capability, "SERVICE/CAPABILITY") and
/// `workspace` (scripts in a virtual workspace, "WORKSPACE_ID").

#include "a2s/exec/gateway.hpp"
#include "appserver/server.hpp"
#include "host/host.hpp"
#include "workspace/manager.hpp"

namespace hearth::cli {

/// Everything given must outlive the resolver and the tools it binds.
appserver::ToolResolver app_tool_resolver(host::Host& host, a2s::Gateway& gateway,
                                          workspace::Manager& workspaces);

}  // namespace hearth::cli
