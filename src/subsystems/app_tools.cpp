#include "subsystems/app_tools.hpp"

#include <boost/asio/awaitable.hpp>
#include <utility>

#include "mcpserver/catalog.hpp"

namespace hearth::subsystems {

namespace asio = boost::asio;

namespace {

/// "tool_" and the key with every character but letters, digits, '_' and '-' made '_'.
std::string tool_name(std::string_view key) {
  std::string out = "tool_";
  for (char c : key.substr(0, 58)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

/// "SERVICE<sep>REST" taken apart at the first of `separators`; `form` names the expected form.
Result<std::pair<std::string, std::string>> split_target(const std::string& target,
                                                         const char* separators,
                                                         std::string_view form) {
  const auto cut = target.find_first_of(separators);
  if (cut == std::string::npos) {
    return Error::make(ErrorCode::kInvalidParams,
                       "a " + std::string(form) + ", not '" + target + "'");
  }
  return std::pair{target.substr(0, cut), target.substr(cut + 1)};
}

asio::awaitable<Result<json::value>> call_endpoint(host::Host& host, std::string service,
                                                   std::string endpoint, json::value input) {
  auto found = host.find_service(service);
  if (!found.ok()) co_return found.error();
  auto keep = found.value();  // alive until the call returns
  host::Caller caller;
  caller.transport = "inproc";
  caller.client = "app-server";
  co_return co_await host.call(*keep, endpoint, std::move(input), caller);
}

asio::awaitable<Result<json::value>> call_registry(a2s::Gateway& gateway, std::string service,
                                                   std::string capability, json::object args) {
  a2s::ExecuteParams params;
  params.service = std::move(service);
  params.capability = std::move(capability);
  params.variables = std::move(args);
  params.caller = "app-server";
  co_return co_await gateway.execute(std::move(params));
}

asio::awaitable<Result<json::value>> run_script(workspace::Manager& workspaces, std::string id,
                                                json::object args) {
  auto ws = workspaces.find(id);
  if (!ws.ok()) co_return ws.error();
  const auto* script = args.if_contains("script");
  if (script == nullptr || !script->is_string()) {
    co_return Error::make(ErrorCode::kInvalidParams, "script must be a string");
  }
  workspace::ExecuteRequest request;
  request.script = std::string(script->get_string());
  request.actor = "app-server";
  auto keep = ws.value();
  auto r = co_await keep->execute(std::move(request));
  if (!r.ok()) co_return r.error();
  co_return json::value(std::move(r).value());
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): a coroutine keeps its parameters
asio::awaitable<Result<json::value>> call_backend(std::shared_ptr<agentapp::Backends> backends,
                                                  std::string app, std::string service,
                                                  json::object params) {
  // Named: GCC 12 may destroy a temporary argument of a co_awaited coroutine twice.
  std::string method = "tools/call";
  json::value args(std::move(params));
  co_return co_await backends->call(std::move(app), std::move(service), std::move(method),
                                    std::move(args));
}

}  // namespace

appserver::BackendTools app_backend_tools(const std::shared_ptr<agentapp::Backends>& backends) {
  appserver::BackendTools tools;
  tools.list = [backends](std::string app) { return backends->tools(std::move(app)); };
  tools.call = [backends](std::string app, std::string service, json::object params) {
    return call_backend(backends, std::move(app), std::move(service), std::move(params));
  };
  return tools;
}

appserver::ToolResolver app_tool_resolver(host::Host& host, a2s::Gateway& gateway,
                                          workspace::Manager& workspaces) {
  return [&host, &gateway, &workspaces](const json::object& ref) -> Result<appserver::ToolBinding> {
    appserver::ToolBinding b;
    const std::string key = json::string_member(ref, "key");
    b.provider = json::string_member(ref, "provider");
    b.target = json::string_member(ref, "capability");
    if (b.target.empty()) b.target = key;
    b.name = tool_name(key.empty() ? b.target : key);
    if (b.provider == "lavs") {
      HEARTH_ASSIGN_OR_RETURN(auto parts,
                              split_target(b.target, "/.", "lavs tool names SERVICE.ENDPOINT"));
      std::string service = std::move(parts.first);
      std::string endpoint = std::move(parts.second);
      HEARTH_ASSIGN_OR_RETURN(auto svc, host.find_service(service));
      const manifest::Endpoint* found = nullptr;
      for (const auto& e : svc->manifest.endpoints) {
        if (e.id == endpoint) found = &e;
      }
      if (found == nullptr || found->method == manifest::Method::kSubscription) {
        return Error::make(ErrorCode::kInvalidParams,
                           "the service " + service + " has no query or mutation " + endpoint);
      }
      b.writes = found->method == manifest::Method::kMutation;
      b.description =
          found->description.empty() ? "The " + b.target + " endpoint." : found->description;
      // The same arguments as the endpoint's MCP tool: `#/types` resolved, an input that is not
      // an object passed as the argument "input".
      auto input = mcpserver::tool_input_schema(svc->manifest, endpoint);
      b.parameters = std::move(input.schema);
      b.call = [&host, service, endpoint, wrapped = input.wrapped](json::object args) {
        json::value value = wrapped ? json::value(args["input"]) : json::value(std::move(args));
        return call_endpoint(host, service, endpoint, std::move(value));
      };
      return b;
    }
    if (b.provider == "registry" || b.provider == "a2s") {
      HEARTH_ASSIGN_OR_RETURN(
          auto parts, split_target(b.target, "/", "registry tool names SERVICE/CAPABILITY"));
      std::string service = std::move(parts.first);
      std::string capability = std::move(parts.second);
      HEARTH_ASSIGN_OR_RETURN(auto definition, gateway.get(service));
      (void)definition;
      b.description = "The " + capability + " capability of the web service " + service +
                      " (its variables as arguments; credentials come from the vault).";
      b.parameters = json::object{{"type", "object"}};
      b.call = [&gateway, service, capability](json::object args) {
        return call_registry(gateway, service, capability, std::move(args));
      };
      return b;
    }
    if (b.provider == "workspace") {
      HEARTH_ASSIGN_OR_RETURN(auto ws, workspaces.find(b.target));
      (void)ws;
      b.description = "Run a JavaScript script in the virtual workspace " + b.target +
                      ": it changes the workspace's states (docs/workspace.md).";
      b.parameters =
          json::object{{"type", "object"},
                       {"properties", json::object{{"script", json::object{{"type", "string"}}}}},
                       {"required", json::array{"script"}}};
      std::string id = b.target;
      b.call = [&workspaces, id](json::object args) {
        return run_script(workspaces, id, std::move(args));
      };
      return b;
    }
    return Error::make(ErrorCode::kInvalidParams,
                       "hearth binds lavs, registry and workspace tools, not '" + b.provider + "'");
  };
}

}  // namespace hearth::subsystems
