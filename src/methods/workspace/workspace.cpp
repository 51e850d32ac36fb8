#include "methods/workspace/workspace.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <limits>

#include "common/random.hpp"
#include "rpc/params.hpp"

namespace hearth::methods::workspace {
namespace asio = boost::asio;
using hearth::workspace::Manager;
using hearth::workspace::Workspace;
using rpc::Request;

// --- the host as a workspace's LAVS services -------------------------------------------------

asio::awaitable<Result<json::value>> HostServices::call(std::string service, std::string endpoint,
                                                        json::value input, std::string actor,
                                                        bool confidential) {
  const auto start = std::chrono::steady_clock::now();
  auto found = host_.find_service(service);
  if (!found.ok()) co_return found.error();
  std::shared_ptr<const host::Host::Service> held = found.value();
  host::Caller caller;
  caller.transport = "inproc";
  caller.client = actor;
  caller.confidential = confidential;
  auto result = co_await host_.call(*held, endpoint, std::move(input), caller);
  host::AuditRecord record;
  record.service = service;
  record.endpoint = endpoint;
  record.method = "workspace/effect";
  record.transport = "inproc";
  record.client = actor;
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  if (!result.ok()) record.error = result.error().code;
  co_await host_.audit(std::move(record));
  co_return result;
}

asio::awaitable<Result<std::shared_ptr<void>>> HostServices::subscribe(
    std::string service, std::string endpoint, json::value input,
    std::function<void(json::value)> on_item) {
  auto found = host_.find_service(service);
  if (!found.ok()) co_return found.error();
  // A subscriber in the daemon whose items go to `on_item`; dropping the handle closes it, which
  // ends the subscription.
  auto subscriber = std::make_shared<host::LocalSubscriber>(
      [on_item](const std::string&, const host::SubscriptionItem& item) { on_item(item.data); });
  std::shared_ptr<host::Subscriber> as_subscriber = subscriber;
  auto id = co_await host_.subscribe(std::move(as_subscriber), found.value(), endpoint,
                                     std::move(input), nullptr);
  if (!id.ok()) co_return id.error();
  std::shared_ptr<void> handle(subscriber.get(), [subscriber](void*) { subscriber->close(); });
  co_return handle;
}

namespace {

Result<std::shared_ptr<Workspace>> workspace_of(Manager& manager, const json::object& params) {
  HEARTH_ASSIGN_OR_RETURN(auto id, rpc::required_string(params, "workspaceId"));
  return manager.find(id);
}

std::string actor_of(const Request& request) {
  const std::string client = request.session ? request.session->client() : std::string();
  return client.empty() ? "rpc" : "rpc:" + client;
}

asio::awaitable<Result<json::value>> list(Manager& manager, const Request&) {
  json::array out;
  for (const auto& ws : manager.list()) {
    json::object o{{"workspaceId", ws->name()},
                   {"description", ws->definition().description},
                   {"version", ws->version()},
                   {"dir", ws->definition().dir.string()}};
    auto notes = ws->notes();
    if (!notes.empty()) {
      json::array n;
      for (auto& s : notes) n.push_back(json::string(s));
      o["notes"] = std::move(n);
    }
    out.push_back(std::move(o));
  }
  co_return json::value(json::object{{"workspaces", std::move(out)}});
}

asio::awaitable<Result<json::value>> render(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto format, rpc::string_param(*params, "format", false));
  hearth::workspace::RenderOptions options;
  const std::string f = format.value_or("text");
  if (f == "text" || f == "tui") {
    options.format = hearth::workspace::Format::kText;
  } else if (f == "markdown") {
    options.format = hearth::workspace::Format::kMarkdown;
  } else if (f == "json") {
    options.format = hearth::workspace::Format::kJson;
  } else {
    co_return rpc::invalid_param("format must be text, markdown or json", "format", "enum");
  }
  for (const char* key : {"guide", "withGuide"}) {
    if (const auto* g = params->if_contains(key); g != nullptr && !g->is_null()) {
      if (!g->is_bool()) {
        co_return rpc::invalid_param(std::string(key) + " must be a boolean", key, "type");
      }
      options.guide = g->get_bool();
    }
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto budget, rpc::int_param(*params, "budget", 500));
  if (budget) options.budget = static_cast<std::size_t>(*budget);
  json::object out{{"workspaceId", ws->name()}, {"format", f}};
  if (options.format == hearth::workspace::Format::kJson) {
    auto view = ws->render_object(options);
    out["version"] = view.at("version");
    out["view"] = std::move(view);
  } else {
    out["version"] = ws->version();
    out["text"] = ws->render(options);
  }
  co_return json::value(std::move(out));
}

asio::awaitable<Result<json::value>> execute(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  hearth::workspace::ExecuteRequest r;
  HEARTH_CO_ASSIGN_OR_RETURN(r.script, rpc::required_string(*params, "script"));
  HEARTH_CO_ASSIGN_OR_RETURN(r.expected_version, rpc::int_param(*params, "expectedVersion", 0));
  HEARTH_CO_ASSIGN_OR_RETURN(r.dry_run, rpc::bool_param(*params, "dryRun"));
  r.actor = actor_of(request);
  auto out = co_await ws->execute(std::move(r));
  if (!out.ok()) co_return out.error();
  co_return json::value(std::move(out).value());
}

asio::awaitable<Result<json::value>> state(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto name, rpc::string_param(*params, "name", false));
  if (name) {
    HEARTH_CO_ASSIGN_OR_RETURN(auto value, ws->state(*name, false));
    co_return json::value(json::object{{"workspaceId", ws->name()},
                                       {"version", ws->version()},
                                       {"name", *name},
                                       {"value", std::move(value)}});
  }
  // Every state the model may read.
  json::object states;
  for (const auto& s : ws->definition().states) {
    if (!s.readable()) continue;
    auto value = ws->state(s.name, false);
    if (value.ok()) states[s.name] = std::move(value).value();
  }
  co_return json::value(json::object{
      {"workspaceId", ws->name()}, {"version", ws->version()}, {"states", std::move(states)}});
}

asio::awaitable<Result<json::value>> history(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto after, rpc::int_param(*params, "afterSeq", 0));
  HEARTH_CO_ASSIGN_OR_RETURN(auto since, rpc::int_param(*params, "sinceVersion", 0));
  HEARTH_CO_ASSIGN_OR_RETURN(auto limit, rpc::int_param(*params, "limit", 1));
  const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(limit.value_or(50), 500));
  // sinceVersion: what came after the change that made that version (failed runs included).
  const std::size_t read = since ? std::numeric_limits<std::int32_t>::max() : n;
  auto entries = co_await ws->history(after.value_or(0), read);
  if (!entries.ok()) co_return entries.error();
  json::array out;
  bool past = !since || *since == 0;
  for (const auto& e : entries.value()) {
    if (!past) {
      past = e.version && *e.version >= *since;
      continue;
    }
    if (out.size() >= n) break;
    // The operator's record keeps the whole patch (a revert needs it); what is served shows
    // no value of a state the model may not read.
    json::object entry = e.to_json();
    entry["patch"] = hearth::workspace::visible_patch(ws->definition(), e.patch);
    entry["inverse"] = hearth::workspace::visible_patch(ws->definition(), e.inverse);
    out.push_back(std::move(entry));
  }
  co_return json::value(json::object{{"workspaceId", ws->name()}, {"entries", std::move(out)}});
}

asio::awaitable<Result<json::value>> revert(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto version, rpc::int_param(*params, "version", 1));
  HEARTH_CO_ASSIGN_OR_RETURN(auto to_version, rpc::int_param(*params, "toVersion", 0));
  if (version.has_value() == to_version.has_value()) {
    co_return rpc::invalid_param(
        "give version (undo the change that made it) or toVersion (go back to it), not both",
        version ? "toVersion" : "version", "required");
  }
  std::string actor = actor_of(request);
  Result<json::object> out = Error::make(ErrorCode::kInternalError, "unreached");
  if (version) {
    out = co_await ws->revert(*version, actor);
  } else {
    out = co_await ws->revert_to(*to_version, actor);
  }
  if (!out.ok()) co_return out.error();
  co_return json::value(std::move(out).value());
}

asio::awaitable<Result<json::value>> open(Manager& manager, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto path, rpc::required_string(*params, "path"));
  std::filesystem::path dir(path);
  if (!dir.is_absolute()) {
    co_return rpc::invalid_param("path must be an absolute folder path", "path", "format");
  }
  auto ws = co_await manager.open(dir);
  if (!ws.ok()) co_return ws.error();
  co_return json::value(json::object{{"workspaceId", ws.value()->name()},
                                     {"version", ws.value()->version()},
                                     {"dir", ws.value()->definition().dir.string()}});
}

json::object changed_params(const hearth::workspace::ChangeEvent& e) {
  json::array changed;
  for (const auto& n : e.changed) changed.push_back(json::string(n));
  return json::object{{"workspaceId", e.workspace},
                      {"version", e.version},
                      {"changed", std::move(changed)},
                      {"actor", e.actor},
                      {"kind", e.kind}};
}

asio::awaitable<Result<json::value>> subscribe(Manager& manager, const Request& request) {
  if (!request.session || !request.session->can_push()) {
    co_return Error::make(ErrorCode::kMethodNotFound,
                          "Method not found: workspace/subscribe is only available over WebSocket",
                          json::object{{"hint", "subscribe over the WebSocket endpoint /ws"}});
  }
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto ws, workspace_of(manager, *params));
  std::weak_ptr<rpc::Session> weak_session = request.session;
  const auto id = ws->add_listener([weak_session](const hearth::workspace::ChangeEvent& e) {
    if (auto s = weak_session.lock()) {
      s->push(json::serialize(rpc::make_notification("workspace/changed", changed_params(e))));
    }
  });
  std::weak_ptr<Workspace> weak_ws = ws;
  request.session->on_close([weak_ws, id] {
    if (auto w = weak_ws.lock()) w->remove_listener(id);
  });
  co_return json::value(
      json::object{{"workspaceId", ws->name()}, {"version", ws->version()}, {"subscribed", true}});
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Manager& workspaces) {
  auto bind = [&workspaces](auto fn) {
    return [&workspaces, fn](const Request& r) { return fn(workspaces, r); };
  };
  dispatcher.add("workspace/list", bind(list));
  dispatcher.add("workspace/open", bind(open));
  dispatcher.add("workspace/render", bind(render));
  dispatcher.add("workspace/execute", bind(execute));
  dispatcher.add("workspace/state", bind(state));
  dispatcher.add("workspace/history", bind(history));
  dispatcher.add("workspace/revert", bind(revert));
  dispatcher.add("workspace/subscribe", bind(subscribe));
}

}  // namespace hearth::methods::workspace
