#pragma once
/// Virtual workspaces as MCP (docs/mcp-server.md, "Workspaces"): a client's own model drives a
/// workspace with no model server configured in hearth.
///
/// - Resource `workspace://<id>`: the model's view (the text render with its guide: states,
///   permissions, types, side effects, utilities, examples, rules). It changes with every
///   committed change; a subscribed client gets `notifications/resources/updated`.
/// - Tool `execute_script {script, expectedVersion?, workspaceId?}`: the same run as
///   workspace/execute (the worker and its jail, validation, side effects, one commit with its
///   inverse, history), with what the model may see of the answer and the fresh render.
/// - Tool `read_workspace {workspaceId?}`: the render, for clients that do not read resources.
/// `workspaceId` may be left out when one workspace is served.

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"
#include "workspace/manager.hpp"

namespace hearth::mcpserver {

inline constexpr std::string_view kWorkspaceScheme = "workspace://";
inline constexpr std::string_view kExecuteScriptTool = "execute_script";
inline constexpr std::string_view kReadWorkspaceTool = "read_workspace";

/// The two tools, for tools/list (none when no workspace is served).
json::array workspace_tools(const workspace::Manager& workspaces);

/// `workspace://<id>` for every workspace, for resources/list.
json::array workspace_resources(const workspace::Manager& workspaces);

bool is_workspace_tool(std::string_view name);

/// A tools/call of one of the two tools: an MCP tool result ({content, structuredContent,
/// isError}); protocol errors (an unknown workspace, arguments of the wrong type) are errors.
boost::asio::awaitable<Result<json::value>> call_workspace_tool(workspace::Manager& workspaces,
                                                                std::string name,
                                                                json::value arguments,
                                                                std::string actor);

/// A `workspace://` URI as it is listed: without trailing slashes, which name the same workspace
/// (so that one workspace is one subscription, however its URI is written).
std::string canonical_workspace_uri(std::string_view uri);

/// The workspace a `workspace://` URI names; kInvalidParams when it is not one of them.
Result<std::shared_ptr<workspace::Workspace>> workspace_of_uri(const workspace::Manager& workspaces,
                                                               std::string_view uri);

/// resources/read of a `workspace://` URI: {contents: [{uri, mimeType, text}]}.
json::value read_workspace_resource(const workspace::Workspace& ws, std::string_view uri);

}  // namespace hearth::mcpserver
