#include "mcpserver/workspaces.hpp"

#include "workspace/render.hpp"

namespace hearth::mcpserver {
namespace asio = boost::asio;

namespace {

std::string uri_of(const workspace::Workspace& ws) {
  return std::string(kWorkspaceScheme) + ws.name();
}

std::string render_of(const workspace::Workspace& ws, bool guide) {
  workspace::RenderOptions options;
  options.guide = guide;
  return ws.render(options);
}

json::object workspace_id_schema(const workspace::Manager& workspaces) {
  json::array ids;
  for (const auto& ws : workspaces.list()) ids.push_back(json::string(ws->name()));
  return json::object{{"type", "string"},
                      {"enum", std::move(ids)},
                      {"description", "the workspace (may be left out when there is one)"}};
}

Result<std::shared_ptr<workspace::Workspace>> pick(const workspace::Manager& workspaces,
                                                   const json::object& args) {
  const auto* id = args.if_contains("workspaceId");
  if (id != nullptr && !id->is_null()) {
    if (!id->is_string()) {
      return Error::make(ErrorCode::kInvalidParams, "workspaceId must be a string",
                         json::object{{"field", "workspaceId"}, {"constraint", "type"}});
    }
    return workspaces.find(id->get_string());
  }
  auto all = workspaces.list();
  if (all.size() == 1) return all.front();
  std::string names;
  for (const auto& ws : all) names += (names.empty() ? "" : ", ") + ws->name();
  return Error::make(ErrorCode::kInvalidParams,
                     "workspaceId is needed: this server has " + std::to_string(all.size()) +
                         " workspaces (" + names + ")",
                     json::object{{"field", "workspaceId"}, {"constraint", "required"}});
}

json::object text_result(std::string text, json::value structured, bool error) {
  json::object out{
      {"content", json::array{json::object{{"type", "text"}, {"text", std::move(text)}}}},
      {"isError", error}};
  if (!structured.is_null()) out["structuredContent"] = std::move(structured);
  return out;
}

}  // namespace

bool is_workspace_tool(std::string_view name) {
  return name == kExecuteScriptTool || name == kReadWorkspaceTool;
}

json::array workspace_tools(const workspace::Manager& workspaces) {
  const auto all = workspaces.list();
  if (all.empty()) return {};
  std::string which;
  for (const auto& ws : all) {
    which += "\n- " + ws->name() +
             (ws->definition().description.empty() ? "" : ": " + ws->definition().description) +
             " (resource " + uri_of(*ws) + ")";
  }
  const bool one = all.size() == 1;
  json::object execute_props{
      {"script",
       json::object{{"type", "string"},
                    {"description",
                     "JavaScript run as the body of an async function: assign the states you "
                     "may write, call the utilities, return a value to see it"}}},
      {"expectedVersion",
       json::object{{"type", "integer"},
                    {"description", "refuse the change unless the workspace is at this version"}}},
      {"workspaceId", workspace_id_schema(workspaces)}};
  json::array execute_required{"script"};
  json::object read_props{{"workspaceId", workspace_id_schema(workspaces)}};
  json::array read_required;
  if (!one) {
    execute_required.push_back("workspaceId");
    read_required.push_back("workspaceId");
  }
  return json::array{
      json::object{
          {"name", kExecuteScriptTool},
          {"title", "Run a script in a virtual workspace"},
          {"description",
           "Change a virtual workspace's states by running JavaScript. Read the workspace first "
           "(read_workspace, or its resource): it lists the states, which you may read and "
           "write, their types, what a change triggers, the utilities and the rules. Every "
           "changed state is validated; on any error nothing changes and the error says which "
           "state, path and rule. The result shows the workspace again as it is after the "
           "script. Workspaces:" +
               which},
          {"inputSchema", json::object{{"type", "object"},
                                       {"properties", std::move(execute_props)},
                                       {"required", std::move(execute_required)}}},
          {"annotations", json::object{{"readOnlyHint", false},
                                       {"destructiveHint", false},
                                       {"idempotentHint", false},
                                       {"openWorldHint", false}}}},
      json::object{
          {"name", kReadWorkspaceTool},
          {"title", "Read a virtual workspace"},
          {"description",
           "The workspace as a model works on it: its states with their current values, "
           "types and permissions, what a change triggers, the utilities, examples and "
           "rules of a script. Workspaces:" +
               which},
          {"inputSchema", json::object{{"type", "object"},
                                       {"properties", std::move(read_props)},
                                       {"required", std::move(read_required)}}},
          {"annotations", json::object{{"readOnlyHint", true}, {"openWorldHint", false}}}}};
}

json::array workspace_resources(const workspace::Manager& workspaces) {
  json::array out;
  for (const auto& ws : workspaces.list()) {
    out.push_back(json::object{
        {"uri", uri_of(*ws)},
        {"name", ws->name()},
        {"title", "Virtual workspace " + ws->name()},
        {"description", (ws->definition().description.empty() ? std::string("A virtual workspace")
                                                              : ws->definition().description) +
                            " (the model's view; subscribe to hear of every change)"},
        {"mimeType", "text/plain"}});
  }
  return out;
}

std::string canonical_workspace_uri(std::string_view uri) {
  while (uri.size() > kWorkspaceScheme.size() && uri.back() == '/') uri.remove_suffix(1);
  return std::string(uri);
}

Result<std::shared_ptr<workspace::Workspace>> workspace_of_uri(const workspace::Manager& workspaces,
                                                               std::string_view uri) {
  if (!uri.starts_with(kWorkspaceScheme)) {
    return Error::make(ErrorCode::kInvalidParams, "not a workspace:// URI");
  }
  return workspaces.find(
      std::string_view(canonical_workspace_uri(uri)).substr(kWorkspaceScheme.size()));
}

json::value read_workspace_resource(const workspace::Workspace& ws, std::string_view uri) {
  return json::object{
      {"contents",
       json::array{json::object{{"uri", uri},
                                {"mimeType", "text/plain"},
                                {"text", render_of(ws, true)},
                                {"_meta", json::object{{"hearth/version", ws.version()}}}}}}};
}

asio::awaitable<Result<json::value>> call_workspace_tool(workspace::Manager& workspaces,
                                                         std::string name, json::value arguments,
                                                         std::string actor) {
  const json::object args =
      arguments.is_object() ? std::move(arguments.get_object()) : json::object{};
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, pick(workspaces, args));
  if (name == kReadWorkspaceTool) {
    co_return json::value(
        text_result(render_of(*ws, true),
                    json::object{{"workspaceId", ws->name()}, {"version", ws->version()}}, false));
  }
  const auto* script = args.if_contains("script");
  if (script == nullptr || !script->is_string()) {
    co_return Error::make(ErrorCode::kInvalidParams, "script must be a string",
                          json::object{{"field", "script"}, {"constraint", "type"}});
  }
  workspace::ExecuteRequest request;
  request.script = std::string(script->get_string());
  request.actor = std::move(actor);
  if (const auto* v = args.if_contains("expectedVersion"); v != nullptr && !v->is_null()) {
    if (!v->is_int64()) {
      co_return Error::make(ErrorCode::kInvalidParams, "expectedVersion must be an integer",
                            json::object{{"field", "expectedVersion"}, {"constraint", "type"}});
    }
    request.expected_version = v->get_int64();
  }
  auto executed = co_await ws->execute(std::move(request));
  // What the model reads: the answer as the agent loop's tool gives it (no value of a private or
  // write-only state is in it), then the workspace as it is now. A failed script is a tool
  // error the model can act on, not a protocol error.
  const std::string view = render_of(*ws, false);
  if (!executed.ok()) {
    const json::object error = to_json(executed.error());
    co_return json::value(
        text_result(json::serialize(json::object{{"ok", false}, {"error", error}}) + "\n\n" + view,
                    json::object{{"ok", false}, {"error", error}}, true));
  }
  json::object shown{{"ok", true},
                     {"version", executed->at("version")},
                     {"committed", executed->at("committed")},
                     {"changed", executed->at("changed")},
                     {"output", executed->at("output")},
                     {"console", executed->at("console")},
                     {"effects", executed->at("effects")}};
  if (const auto* c = executed->if_contains("completion")) shown["completion"] = *c;
  co_return json::value(text_result(json::serialize(shown) + "\n\n" + view, shown, false));
}

}  // namespace hearth::mcpserver
