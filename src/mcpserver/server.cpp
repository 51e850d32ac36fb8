#include "mcpserver/server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>
#include <set>

#include "common/on_strand.hpp"
#include "common/random.hpp"
#include "jail/glob.hpp"
#include "mcpserver/app_document.hpp"
#include "mcpserver/catalog.hpp"
#include "mcpserver/workspaces.hpp"
#include "rpc/params.hpp"
#include "views/component.hpp"
#include "views/document.hpp"

namespace hearth::mcpserver {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
/// JSON-RPC error codes MCP uses beyond the standard ones.
constexpr int kResourceNotFound = -32002;
constexpr int kRequestCancelled = -32800;

constexpr std::array<std::string_view, 8> kLevels = {"emergency", "alert",  "critical", "error",
                                                     "warning",   "notice", "info",     "debug"};

int level_of(std::string_view name) {
  for (std::size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Error error_with(int code, std::string message, json::value data = nullptr) {
  return Error::make(static_cast<ErrorCode>(code), std::move(message), std::move(data));
}

std::string notification(std::string_view method, json::value params) {
  return json::dump(rpc::make_notification(method, std::move(params)));
}

}  // namespace

bool supported_version(std::string_view version) {
  return version == "2025-11-25" || version == "2025-06-18" || version == "2025-03-26" ||
         version == "2024-11-05";
}

// ---------------------------------------------------------------------------------------------
// Session

struct Session::Call {
  explicit Call(const asio::any_io_executor& executor)
      : strand(asio::make_strand(executor)), timer(strand) {}
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;                   // wakes the waiter: result, cancel, progress
  std::optional<Result<json::value>> result;  // on the strand
  bool cancelled = false;                     // on the strand
};

struct Session::Subscription {
  std::shared_ptr<host::LocalSubscriber> channel;  // what the host tells the items to
  std::string id;                                  // the LAVS subscription id
  std::mutex mu;
  json::value latest;  // the last item, null before the first
  bool has_item = false;
};

namespace {

void cancel_call(const std::shared_ptr<Session::Call>& call) {
  asio::post(call->strand, [call] {
    call->cancelled = true;
    call->timer.cancel();
  });
}

}  // namespace

Session::Session(std::string id, std::string transport, PushFn push)
    : id_(std::move(id)), transport_(std::move(transport)), push_(std::move(push)) {}

bool Session::initialized() const {
  std::lock_guard lock(mu_);
  return initialized_;
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mu_);
  return version_;
}

bool Session::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void Session::push(std::string message) const {
  if (push_ && !closed()) push_(std::move(message));
}

// ---------------------------------------------------------------------------------------------
// Catalog

struct Server::Catalog {
  std::shared_ptr<const host::Host::ServiceList> services;
  json::array tools;
  struct Target {
    std::shared_ptr<const host::Host::Service> service;
    std::string endpoint;
    bool wrap = false;           ///< the result travels as {"result": value}
    bool wrap_input = false;     ///< the input travels as the argument "input"
    std::optional<Media> media;  ///< the output is an image or a sound (media_of)
  };
  std::map<std::string, Target, std::less<>> by_name;
  using AppTools = std::map<std::string, AppTool, std::less<>>;
  /// Each service's query and mutation endpoints as its view's bridge calls them.
  std::map<std::string, AppTools, std::less<>> app_tools;
  /// Services with a view: an empty string when the view is offered as an MCP App (its document
  /// was built), else why it is not (it is then neither listed nor named by any tool).
  std::map<std::string, std::string, std::less<>> views;
};

asio::awaitable<std::shared_ptr<const Server::Catalog>> Server::catalog() {
  auto services = host_.services();
  {
    std::lock_guard lock(mu_);
    if (catalog_ && catalog_->services == services) co_return catalog_;
  }
  auto built = std::make_shared<Catalog>();
  built->services = services;
  const auto named = name_tools(*services);
  for (const auto& n : named) {
    const auto& m = n.service->manifest;
    const auto& endpoint = *n.endpoint;
    // An output that is not an object travels as {"result": value}, an input that is not one
    // as the argument "input" (tool_definition describes them so).
    json::value output = endpoint_schema(m, endpoint.id, "output");
    const bool wrap = output.is_object() && !is_object_schema(resolve_types(output, m.types));
    json::value input = endpoint_schema(m, endpoint.id, "input");
    const bool wrap_input = input.is_object() && wraps_input(resolve_types(input, m.types));
    built->by_name.emplace(n.name, Catalog::Target{n.service, endpoint.id, wrap, wrap_input,
                                                   media_of(resolve_types(output, m.types))});
    built->app_tools[m.name][endpoint.id] =
        AppTool{n.name, endpoint.method == manifest::Method::kMutation, wrap_input};
  }
  // A view is offered only when its document can be built (a cdn origin allowed, npm modules
  // bundled): every ui:// a tool names can then be read. Building it reads files.
  std::function<std::map<std::string, std::string, std::less<>>()> check =
      [services, origins = options_.cdn_origins, tools = built->app_tools] {
        std::map<std::string, std::string, std::less<>> views;
        for (const auto& s : *services) {
          const auto& m = s->manifest;
          if (m.view.is_null()) continue;
          const auto it = tools.find(m.name);
          auto document =
              app_document(*s, origins, it == tools.end() ? Catalog::AppTools{} : it->second);
          views[m.name] = document.ok() ? std::string() : document.error().message;
        }
        return views;
      };
  built->views = co_await host_.blocking().run(std::move(check));
  for (const auto& [name, reason] : built->views) {
    if (!reason.empty()) {
      spdlog::info("mcp: the view of {} is not offered as an MCP App: {}", name, reason);
    }
  }
  for (const auto& n : named) {
    const auto& m = n.service->manifest;
    const auto view = built->views.find(m.name);
    const bool offered = view != built->views.end() && view->second.empty();
    built->tools.push_back(
        tool_definition(m, *n.endpoint, n.name, offered ? view_uri(m.name) : std::string()));
  }
  std::lock_guard lock(mu_);
  catalog_ = built;
  co_return built;
}

// ---------------------------------------------------------------------------------------------
// Server

Server::Server(host::Host& host, asio::any_io_executor executor, Options options)
    : host_(host), executor_(std::move(executor)), options_(std::move(options)) {
  add_methods();
}

Server::~Server() {
  close_all();
}

std::shared_ptr<Session> Server::open(std::string transport, Session::PushFn push) {
  auto session = std::make_shared<Session>(random_hex(16), std::move(transport), std::move(push));
  std::lock_guard lock(mu_);
  // Forget sessions that are gone.
  std::erase_if(sessions_, [](const auto& entry) { return entry.second.expired(); });
  sessions_[session->id()] = session;
  return session;
}

std::shared_ptr<Session> Server::stateless(std::string transport) {
  return std::make_shared<Session>(std::string(), std::move(transport), nullptr);
}

std::shared_ptr<Session> Server::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  auto session = it->second.lock();
  if (!session || session->closed()) return nullptr;
  return session;
}

std::size_t Server::session_count() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [id, weak] : sessions_) {
    auto s = weak.lock();
    if (s && !s->closed()) ++n;
  }
  return n;
}

void Server::close(const std::shared_ptr<Session>& session) {
  std::map<std::string, std::shared_ptr<Session::Call>> calls;
  std::map<std::string, std::shared_ptr<Session::Subscription>> subscriptions;
  std::map<std::string, std::function<void()>> watches;
  {
    std::lock_guard lock(session->mu_);
    if (session->closed_) return;
    session->closed_ = true;
    calls.swap(session->calls_);
    subscriptions.swap(session->subscriptions_);
    watches.swap(session->watches_);
  }
  for (auto& [uri, end] : watches) end();
  for (auto& [id, call] : calls) cancel_call(call);
  for (auto& [uri, sub] : subscriptions) {
    host_.unsubscribe(sub->channel->id(), sub->id);
    sub->channel->close();
  }
  std::lock_guard lock(mu_);
  sessions_.erase(session->id());
}

void Server::close_all() {
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, weak] : sessions_) {
      if (auto s = weak.lock()) all.push_back(std::move(s));
    }
  }
  for (const auto& s : all) close(s);
}

void Server::services_changed(const std::vector<std::string>& what) {
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, weak] : sessions_) {
      if (auto s = weak.lock()) all.push_back(std::move(s));
    }
  }
  std::string names;
  for (const auto& n : what) names += (names.empty() ? "" : ", ") + n;
  for (const auto& s : all) {
    if (!s->initialized()) continue;
    s->push(notification("notifications/tools/list_changed", json::object{}));
    s->push(notification("notifications/resources/list_changed", json::object{}));
    log(*s, 6, "hearth", "services changed: " + (names.empty() ? std::string("-") : names));
  }
}

void Server::log(Session& session, int level, std::string_view logger, std::string text) {
  {
    std::lock_guard lock(session.mu_);
    if (level > session.log_level_ || !session.initialized_) return;
  }
  json::object params{{"level", kLevels[static_cast<std::size_t>(level)]},
                      {"logger", logger},
                      {"data", std::move(text)}};
  session.push(notification("notifications/message", std::move(params)));
}

bool Server::is_initialize(const json::value& message) {
  const auto* method = json::member(message, "method");
  return method != nullptr && method->is_string() && method->get_string() == "initialize";
}

std::shared_ptr<Session> Server::session_of(const rpc::Request& request) const {
  if (!request.session) return nullptr;
  std::lock_guard lock(mu_);
  auto it = contexts_.find(request.session->id());
  return it == contexts_.end() ? nullptr : it->second.session.lock();
}

asio::awaitable<std::optional<json::value>> Server::handle(std::shared_ptr<Session> session,
                                                           json::value message, RequestSink sink,
                                                           bool stateless) {
  // One rpc::Session per message: its push is where this message's notifications go.
  rpc::Session::PushFn push;
  if (sink) {
    push = sink;
  } else {
    push = [weak = std::weak_ptr<Session>(session)](std::string text) {
      if (auto s = weak.lock()) s->push(std::move(text));
    };
  }
  auto channel = std::make_shared<rpc::Session>("mcp-" + session->transport(), std::move(push));
  {
    std::lock_guard lock(mu_);
    contexts_[channel->id()] = Context{session, sink, stateless};
  }
  auto answer = co_await dispatcher_.handle_value(std::move(message), channel);
  {
    std::lock_guard lock(mu_);
    contexts_.erase(channel->id());
  }
  channel->close();
  if (!answer) co_return std::nullopt;
  // A request the client cancelled gets no answer.
  auto cancelled = [](const json::value& response) {
    const auto* error = json::member(response, "error");
    const auto* code = error ? json::member(*error, "code") : nullptr;
    return code != nullptr && code->is_int64() && code->get_int64() == kRequestCancelled;
  };
  if (answer->is_array()) {
    json::array kept;
    for (auto& r : answer->get_array()) {
      if (!cancelled(r)) kept.push_back(std::move(r));
    }
    if (kept.empty()) co_return std::nullopt;
    co_return json::value(std::move(kept));
  }
  if (cancelled(*answer)) co_return std::nullopt;
  co_return answer;
}

void Server::add_methods() {
  // Every method but initialize and ping needs an initialized session (or a stateless request).
  auto gated = [this](rpc::Method method) -> rpc::Method {
    return [this, method = std::move(method)](
               const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
      bool allowed = false;
      if (request.session) {
        std::lock_guard lock(mu_);
        auto it = contexts_.find(request.session->id());
        if (it != contexts_.end()) {
          auto s = it->second.session.lock();
          allowed = it->second.stateless || (s && s->initialized());
        }
      }
      if (!allowed) {
        co_return Error::make(ErrorCode::kInvalidRequest,
                              "Invalid Request: the session has not been initialized (send "
                              "initialize first)");
      }
      co_return co_await method(request);
    };
  };
  dispatcher_.add("initialize", [this](const rpc::Request& r) { return initialize(r); });
  dispatcher_.add("ping", [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
    co_return json::value(json::object{});
  });
  dispatcher_.add("notifications/initialized",
                  [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
                    co_return json::value(nullptr);
                  });
  dispatcher_.add("notifications/cancelled",
                  [this](const rpc::Request& r) { return cancelled(r); });
  dispatcher_.add("tools/list", gated([this](const rpc::Request& r) { return tools_list(r); }));
  dispatcher_.add("tools/call", gated([this](const rpc::Request& r) { return tools_call(r); }));
  dispatcher_.add("resources/list",
                  gated([this](const rpc::Request& r) { return resources_list(r); }));
  dispatcher_.add("resources/templates/list",
                  gated([](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
                    co_return json::value(json::object{{"resourceTemplates", json::array{}}});
                  }));
  dispatcher_.add("resources/read",
                  gated([this](const rpc::Request& r) { return resources_read(r); }));
  dispatcher_.add("resources/subscribe",
                  gated([this](const rpc::Request& r) { return resources_subscribe(r); }));
  dispatcher_.add("resources/unsubscribe",
                  gated([this](const rpc::Request& r) { return resources_unsubscribe(r); }));
  dispatcher_.add("logging/setLevel",
                  gated([this](const rpc::Request& r) { return set_level(r); }));
}

// ---------------------------------------------------------------------------------------------
// Methods

asio::awaitable<Result<json::value>> Server::initialize(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string requested,
                             rpc::required_string(*params, "protocolVersion"));
  std::string client_name;
  if (const auto* info = params->if_contains("clientInfo"); info && info->is_object()) {
    if (const auto* n = info->get_object().if_contains("name"); n && n->is_string()) {
      client_name = std::string(n->get_string());
    }
  }
  const std::string version =
      supported_version(requested) ? requested : std::string(kLatestVersion);
  if (session) {
    std::lock_guard lock(session->mu_);
    session->initialized_ = true;
    session->version_ = version;
    session->client_name_ = client_name.substr(0, 200);
  }
  json::object capabilities{{"tools", json::object{{"listChanged", true}}},
                            {"resources", json::object{{"subscribe", true}, {"listChanged", true}}},
                            {"logging", json::object{}}};
  json::object result{
      {"protocolVersion", version},
      {"capabilities", std::move(capabilities)},
      {"serverInfo", json::object{{"name", options_.name},
                                  {"title", "hearth local agent host"},
                                  {"version", options_.version}}},
      {"instructions",
       "Each tool is an endpoint of a LAVS service served by hearth; queries are read-only. "
       "Calls run under the service's declared permissions in hearth's jail and are audited. "
       "Resources: files a service allows (file://), its view (ui://), its subscriptions "
       "(lavs://, subscribe to get notifications/resources/updated)."}};
  if (options_.workspaces != nullptr && !options_.workspaces->list().empty()) {
    result["instructions"] =
        std::string(result["instructions"].as_string()) +
        " Virtual workspaces (workspace://): read one (read_workspace, or the resource) to see "
        "its states, types, permissions and rules, then change it by running JavaScript with "
        "execute_script; each result shows the workspace as it is after the script.";
  }
  co_return json::value(std::move(result));
}

asio::awaitable<Result<json::value>> Server::tools_list(const rpc::Request& request) {
  (void)request;
  auto c = co_await catalog();
  json::array tools = c->tools;
  if (options_.workspaces != nullptr) {
    // A service endpoint that took one of the names keeps it (its tool came first).
    for (auto& t : workspace_tools(*options_.workspaces)) {
      if (!c->by_name.contains(json::string_member(t, "name"))) tools.push_back(std::move(t));
    }
  }
  co_return json::value(json::object{{"tools", std::move(tools)}});
}

namespace {

asio::awaitable<void> run_call(host::Host& host, std::shared_ptr<const host::Host::Service> service,
                               std::string endpoint, json::value input, host::Caller caller,
                               std::shared_ptr<Session::Call> call) {
  auto result = co_await host.call(*service, endpoint, std::move(input), std::move(caller));
  call->result.emplace(std::move(result));
  call->timer.cancel();
}

asio::awaitable<std::optional<Result<json::value>>> wait_call(std::shared_ptr<Session::Call> call,
                                                              std::chrono::milliseconds interval,
                                                              std::function<void(int)> progress) {
  int ticks = 0;
  while (!call->result && !call->cancelled) {
    if (progress) {
      call->timer.expires_after(interval);
    } else {
      call->timer.expires_after(std::chrono::hours(24));
    }
    auto [ec] = co_await call->timer.async_wait(kUseTuple);
    (void)ec;
    if (!call->result && !call->cancelled && progress) progress(++ticks);
  }
  if (!call->result) co_return std::nullopt;
  co_return std::move(*call->result);
}

}  // namespace

asio::awaitable<std::optional<Result<json::value>>> Server::run_cancellable(
    const rpc::Request& request, std::shared_ptr<Session> session,
    std::shared_ptr<const host::Host::Service> service, std::string endpoint, json::value input,
    host::Caller caller, json::value progress_token) {
  // The call runs on a strand of its own, so that a cancel (another message of the session) or
  // the progress timer can end the wait while the call runs on.
  const std::string key = json::dump(request.id);
  auto call = std::make_shared<Session::Call>(executor_);
  if (session) {
    std::lock_guard lock(session->mu_);
    if (!session->closed_) session->calls_[key] = call;
  }
  asio::co_spawn(call->strand,
                 run_call(host_, std::move(service), std::move(endpoint), std::move(input),
                          std::move(caller), call),
                 asio::detached);
  std::function<void(int)> progress;
  if (!progress_token.is_null()) {
    progress = [channel = request.session, progress_token,
                interval = options_.progress_interval](int tick) {
      const auto seconds = static_cast<double>(tick * interval.count()) / 1000.0;
      json::object note{{"progressToken", progress_token},
                        {"progress", tick},
                        {"message", fmt::format("running for {:.1f} s", seconds)}};
      channel->push(notification("notifications/progress", std::move(note)));
    };
  }
  auto waited = co_await on(call->strand, wait_call(call, options_.progress_interval, progress));
  if (session) {
    std::lock_guard lock(session->mu_);
    session->calls_.erase(key);
  }
  co_return waited;
}

asio::awaitable<Result<json::value>> Server::tools_call(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string name, rpc::required_string(*params, "name"));
  json::value input = nullptr;
  if (const auto* args = params->if_contains("arguments"); args && !args->is_null()) {
    if (!args->is_object()) {
      co_return rpc::invalid_param("'arguments' must be an object", "arguments", "type");
    }
    input = *args;
  }
  json::value progress_token = nullptr;
  if (const auto* meta = params->if_contains("_meta"); meta && meta->is_object()) {
    if (const auto* t = meta->get_object().if_contains("progressToken");
        t && (t->is_string() || t->is_int64() || t->is_uint64())) {
      progress_token = *t;
    }
  }
  auto c = co_await catalog();
  auto it = c->by_name.find(name);
  if (it == c->by_name.end() && options_.workspaces != nullptr && is_workspace_tool(name) &&
      !options_.workspaces->list().empty()) {
    std::string client;
    if (session) {
      std::lock_guard lock(session->mu_);
      client = session->client_name_;
    }
    // Named: GCC 12 frees a temporary argument of a co_awaited coroutine twice.
    std::string actor = client.empty() ? "mcp" : "mcp:" + client;
    co_return co_await call_workspace_tool(*options_.workspaces, name, std::move(input),
                                           std::move(actor));
  }
  if (it == c->by_name.end()) {
    co_return Error::make(ErrorCode::kInvalidParams, "Unknown tool: " + name,
                          json::object{{"field", "name"}, {"constraint", "exists"}});
  }
  const auto& target = it->second;
  if (target.wrap_input) {
    const auto* wrapped = input.is_object() ? input.get_object().if_contains("input") : nullptr;
    input = wrapped != nullptr ? *wrapped : json::value(nullptr);
  }
  const auto start = std::chrono::steady_clock::now();
  std::string client;
  if (session) {
    std::lock_guard lock(session->mu_);
    client = session->client_name_;
  }
  host::Caller caller;
  caller.transport = "mcp";
  caller.client = client;
  // What the handler logs while it runs reaches the client as notifications/message, on this
  // request's stream, at or above the session's level (logging/setLevel).
  std::weak_ptr<Session> weak_session = session;
  caller.on_log = [channel = request.session, weak_session, logger = name](
                      std::string_view level, std::string_view message) {
    auto s = weak_session.lock();
    if (!s || !channel) return;
    {
      std::lock_guard lock(s->mu_);
      if (level_of(level) > s->log_level_) return;
    }
    channel->push(notification(
        "notifications/message",
        json::object{{"level", level}, {"logger", logger}, {"data", std::string(message)}}));
  };
  std::optional<Result<json::value>> waited;
  if (progress_token.is_null() && (!session || session->id().empty())) {
    // Nothing can cancel it and nobody asked for progress: the call is simply awaited.
    auto result =
        co_await host_.call(*target.service, target.endpoint, std::move(input), std::move(caller));
    waited.emplace(std::move(result));
  } else {
    waited = co_await run_cancellable(request, session, target.service, target.endpoint,
                                      std::move(input), std::move(caller), progress_token);
  }
  host::AuditRecord record;
  record.service = target.service->manifest.name;
  record.endpoint = target.endpoint;
  record.method = "tools/call";
  record.transport = request.session ? request.session->transport() : "mcp";
  record.client = client;
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  if (!waited) {
    record.outcome = "cancelled";
    co_await host_.audit(std::move(record));
    co_return error_with(kRequestCancelled, "Request cancelled by the client");
  }
  if (!waited->ok()) record.error = waited->error().code;
  co_await host_.audit(std::move(record));
  if (!waited->ok() && session) {
    log(*session, 4, "hearth", fmt::format("{} failed: {}", name, waited->error().message));
  }
  co_return json::value(tool_result(*waited, target.wrap, target.media));
}

asio::awaitable<Result<json::value>> Server::cancelled(const rpc::Request& request) {
  auto session = session_of(request);
  if (!session || !request.params.is_object()) co_return json::value(nullptr);
  const auto* id = request.params.get_object().if_contains("requestId");
  if (id == nullptr) co_return json::value(nullptr);
  std::shared_ptr<Session::Call> call;
  {
    std::lock_guard lock(session->mu_);
    auto it = session->calls_.find(json::dump(*id));
    if (it != session->calls_.end()) call = it->second;
  }
  // A cancel for a request that already finished (or never was) is ignored, as MCP says.
  if (call) cancel_call(call);
  co_return json::value(nullptr);
}

namespace {

/// The service whose folder holds `path` (absolute), with the path relative to it.
std::optional<std::pair<std::shared_ptr<const host::Host::Service>, std::string>> service_of_file(
    const host::Host::ServiceList& services, const std::string& path) {
  for (const auto& s : services) {
    const std::string dir = s->manifest.dir.string() + "/";
    if (path.starts_with(dir) && path.size() > dir.size()) {
      return std::make_pair(s, path.substr(dir.size()));
    }
  }
  return std::nullopt;
}

json::array list_resources_now(const host::Host::ServiceList& services,
                               const std::set<std::string, std::less<>>& offered_views,
                               std::size_t max_files) {
  json::array out;
  for (const auto& s : services) {
    const auto& m = s->manifest;
    if (offered_views.contains(m.name)) {
      out.push_back(
          json::object{{"uri", view_uri(m.name)},
                       {"name", m.name + " view"},
                       {"title", m.name + " (view)"},
                       {"description", "The view component of " + m.name + " as an MCP App"},
                       {"mimeType", kAppMimeType}});
    }
    for (const auto& e : m.endpoints) {
      if (e.method != manifest::Method::kSubscription) continue;
      out.push_back(json::object{
          {"uri", subscription_uri(m.name, e.id)},
          {"name", m.name + "." + e.id},
          {"title", m.name + ": " + e.id},
          {"description", (e.description.empty() ? "Subscription " + e.id : e.description) +
                              " (subscribe for updates; read gives the latest item)"},
          {"mimeType", "application/json"}});
    }
    if (!m.permissions.file_access || m.permissions.file_access->empty()) continue;
    jail::GlobSet globs(*m.permissions.file_access);
    std::error_code ec;
    std::size_t listed = 0;
    for (fs::recursive_directory_iterator it(m.dir, fs::directory_options::none, ec), end;
         !ec && it != end && listed < max_files; it.increment(ec)) {
      const std::string rel = fs::relative(it->path(), m.dir, ec).generic_string();
      if (ec) break;
      if (it->is_symlink(ec)) {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory(ec)) {
        if (globs.excluded(rel) || it.depth() > 16) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec) || !globs.allows(rel)) continue;
      json::object r{{"uri", file_uri(it->path().string())},
                     {"name", rel},
                     {"title", m.name + ": " + rel},
                     {"mimeType", views::content_type_of(rel)}};
      const auto size = it->file_size(ec);
      if (!ec) r["size"] = size;
      ec.clear();
      out.push_back(std::move(r));
      ++listed;
    }
  }
  return out;
}

}  // namespace

asio::awaitable<Result<json::value>> Server::resources_list(const rpc::Request& request) {
  (void)request;
  auto c = co_await catalog();
  std::set<std::string, std::less<>> offered;
  for (const auto& [name, reason] : c->views) {
    if (reason.empty()) offered.insert(name);
  }
  const std::size_t max_files = options_.max_files;
  std::function<json::array()> work = [services = c->services, offered, max_files] {
    return list_resources_now(*services, offered, max_files);
  };
  auto list = co_await host_.blocking().run(std::move(work));
  if (options_.workspaces != nullptr) {
    for (auto& r : workspace_resources(*options_.workspaces)) list.push_back(std::move(r));
  }
  co_return json::value(json::object{{"resources", std::move(list)}});
}

asio::awaitable<Result<json::value>> Server::resources_read(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string uri, rpc::required_string(*params, "uri"));
  auto not_found = [&uri] {
    return error_with(kResourceNotFound, "Resource not found: " + uri, json::object{{"uri", uri}});
  };
  if (uri.starts_with(kWorkspaceScheme)) {
    if (options_.workspaces == nullptr) co_return not_found();
    auto ws = workspace_of_uri(*options_.workspaces, uri);
    if (!ws.ok()) co_return not_found();
    co_return read_workspace_resource(*ws.value(), uri);
  }
  auto ref = parse_resource_uri(uri);
  if (!ref) co_return not_found();
  auto services = host_.services();
  if (ref->kind == ResourceRef::Kind::kFile) {
    auto found = service_of_file(*services, ref->path);
    if (!found) co_return not_found();
    auto file = co_await host_.read_file(*found->first, found->second);
    if (!file.ok()) {
      if (file.error().code == ErrorCode::kPermissionDenied) co_return not_found();
      co_return file.error();
    }
    const auto& f = file.value().get_object();
    json::object content{{"uri", uri}, {"mimeType", views::content_type_of(found->second)}};
    if (f.at("encoding").as_string() == "base64") {
      content["blob"] = f.at("content");
    } else {
      content["text"] = f.at("content");
    }
    co_return json::value(json::object{{"contents", json::array{std::move(content)}}});
  }
  std::shared_ptr<const host::Host::Service> service;
  for (const auto& s : *services) {
    if (s->manifest.name == ref->service) service = s;
  }
  if (!service) co_return not_found();
  if (ref->kind == ResourceRef::Kind::kView) {
    auto c = co_await catalog();
    const auto view = c->views.find(ref->service);
    if (view == c->views.end()) co_return not_found();
    if (!view->second.empty()) {
      // A view that is not offered (resources/list and tools do not name it): why.
      co_return error_with(kResourceNotFound,
                           "Resource not found: " + uri +
                               " (the view is not offered as an MCP App: " + view->second + ")",
                           json::object{{"uri", uri}, {"reason", view->second}});
    }
    std::vector<std::string> origins = options_.cdn_origins;
    const auto tools = c->app_tools.find(ref->service);
    std::function<Result<AppDocument>()> work =
        [service, origins,
         tools = tools == c->app_tools.end() ? Catalog::AppTools{} : tools->second] {
          return app_document(*service, origins, tools);
        };
    auto document = co_await host_.blocking().run(std::move(work));
    if (!document.ok()) co_return document.error();
    json::object content{{"uri", uri}, {"mimeType", kAppMimeType}, {"text", document.value().html}};
    json::object csp;
    if (!document.value().resource_domains.empty()) {
      json::array domains;
      for (const auto& d : document.value().resource_domains) domains.push_back(json::string(d));
      csp["resourceDomains"] = std::move(domains);
    }
    content["_meta"] =
        json::object{{"ui", json::object{{"csp", std::move(csp)}, {"prefersBorder", true}}}};
    co_return json::value(json::object{{"contents", json::array{std::move(content)}}});
  }
  // A subscription: the latest item this session received.
  bool found_endpoint = false;
  for (const auto& e : service->manifest.endpoints) {
    if (e.id == ref->endpoint && e.method == manifest::Method::kSubscription) found_endpoint = true;
  }
  if (!found_endpoint) co_return not_found();
  std::shared_ptr<Session::Subscription> sub;
  if (session) {
    std::lock_guard lock(session->mu_);
    auto it = session->subscriptions_.find(uri);
    if (it != session->subscriptions_.end()) sub = it->second;
  }
  json::object content{{"uri", uri}, {"mimeType", "application/json"}};
  if (!sub) {
    content["text"] = "null";
    content["_meta"] = json::object{
        {"hearth/note", "not subscribed: resources/subscribe delivers this subscription's items"}};
  } else {
    std::lock_guard lock(sub->mu);
    content["text"] = json::dump(sub->latest);
    if (!sub->has_item) content["_meta"] = json::object{{"hearth/note", "no item yet"}};
  }
  co_return json::value(json::object{{"contents", json::array{std::move(content)}}});
}

asio::awaitable<Result<json::value>> Server::resources_subscribe(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string uri, rpc::required_string(*params, "uri"));
  if (uri.starts_with(kWorkspaceScheme) && options_.workspaces != nullptr) {
    co_return subscribe_workspace(session, uri);
  }
  auto ref = parse_resource_uri(uri);
  if (!ref) {
    co_return error_with(kResourceNotFound, "Resource not found: " + uri,
                         json::object{{"uri", uri}});
  }
  if (ref->kind != ResourceRef::Kind::kSubscription) {
    co_return rpc::invalid_param(
        "only a service's subscriptions (lavs://) and workspaces (workspace://) can be "
        "subscribed; files and views do not announce changes",
        "uri", "subscribable");
  }
  if (!session || !session->push_) {
    co_return Error::make(ErrorCode::kInvalidRequest,
                          "Invalid Request: subscriptions need a session that can be told of "
                          "updates (stdio, or HTTP with Mcp-Session-Id and a GET stream)");
  }
  {
    std::lock_guard lock(session->mu_);
    if (session->subscriptions_.contains(uri)) co_return json::value(json::object{});
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, host_.find_service(ref->service));
  auto sub = std::make_shared<Session::Subscription>();
  std::weak_ptr<Session> weak_session = session;
  std::weak_ptr<Session::Subscription> weak_sub = sub;
  // An item, or the end of the subscription (a reload, an error): either is an update.
  auto updated = [weak_session, uri] {
    if (auto s = weak_session.lock()) {
      s->push(notification("notifications/resources/updated",
                           json::object{{"uri", uri}, {"title", uri}}));
    }
  };
  sub->channel = std::make_shared<host::LocalSubscriber>(
      [weak_sub, updated](const std::string&, const host::SubscriptionItem& item) {
        auto held = weak_sub.lock();
        if (!held) return;
        {
          std::lock_guard lock(held->mu);
          held->latest = item.data;
          held->has_item = true;
        }
        updated();
      },
      [weak_sub, updated](const std::string&, std::string_view, const std::optional<Error>&) {
        if (weak_sub.lock()) updated();
      });
  std::shared_ptr<host::Subscriber> subscriber = sub->channel;
  auto id = co_await host_.subscribe(std::move(subscriber), service, ref->endpoint, json::object{},
                                     nullptr);
  if (!id.ok()) {
    sub->channel->close();
    co_return id.error();
  }
  sub->id = id.value();
  bool keep = false;
  {
    std::lock_guard lock(session->mu_);
    if (!session->closed_ && !session->subscriptions_.contains(uri)) {
      session->subscriptions_[uri] = sub;
      keep = true;
    }
  }
  if (!keep) {
    host_.unsubscribe(sub->channel->id(), sub->id);
    sub->channel->close();
  }
  co_return json::value(json::object{});
}

Result<json::value> Server::subscribe_workspace(const std::shared_ptr<Session>& session,
                                                const std::string& asked) {
  const std::string uri = canonical_workspace_uri(asked);
  auto ws = workspace_of_uri(*options_.workspaces, uri);
  if (!ws.ok()) {
    return error_with(kResourceNotFound, "Resource not found: " + uri, json::object{{"uri", uri}});
  }
  if (!session || !session->push_) {
    return Error::make(ErrorCode::kInvalidRequest,
                       "Invalid Request: subscriptions need a session that can be told of "
                       "updates (stdio, or HTTP with Mcp-Session-Id and a GET stream)");
  }
  std::weak_ptr<Session> weak_session = session;
  // Every committed change (a script of this client or of anyone, a revert, a source) is an
  // update of the model's view.
  const auto id = ws.value()->add_listener([weak_session, uri](const workspace::ChangeEvent& e) {
    if (auto s = weak_session.lock()) {
      s->push(notification("notifications/resources/updated",
                           json::object{{"uri", uri},
                                        {"title", uri},
                                        {"_meta", json::object{{"hearth/version", e.version}}}}));
    }
  });
  std::weak_ptr<workspace::Workspace> weak_ws = ws.value();
  std::function<void()> end = [weak_ws, id] {
    if (auto w = weak_ws.lock()) w->remove_listener(id);
  };
  {
    std::lock_guard lock(session->mu_);
    if (!session->closed_ && !session->watches_.contains(uri)) {
      session->watches_[uri] = std::move(end);
      return json::value(json::object{});
    }
  }
  end();  // subscribed already, or the session closed meanwhile
  return json::value(json::object{});
}

asio::awaitable<Result<json::value>> Server::resources_unsubscribe(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string uri, rpc::required_string(*params, "uri"));
  if (uri.starts_with(kWorkspaceScheme)) uri = canonical_workspace_uri(uri);
  std::shared_ptr<Session::Subscription> sub;
  std::function<void()> watch;
  if (session) {
    std::lock_guard lock(session->mu_);
    auto it = session->subscriptions_.find(uri);
    if (it != session->subscriptions_.end()) {
      sub = it->second;
      session->subscriptions_.erase(it);
    }
    if (auto w = session->watches_.find(uri); w != session->watches_.end()) {
      watch = std::move(w->second);
      session->watches_.erase(w);
    }
  }
  if (watch) {
    watch();
    co_return json::value(json::object{});
  }
  if (!sub) {
    co_return rpc::invalid_param("not subscribed to " + uri, "uri", "subscribed");
  }
  host_.unsubscribe(sub->channel->id(), sub->id);
  sub->channel->close();
  co_return json::value(json::object{});
}

asio::awaitable<Result<json::value>> Server::set_level(const rpc::Request& request) {
  auto session = session_of(request);
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string level, rpc::required_string(*params, "level"));
  const int n = level_of(level);
  if (n < 0) {
    co_return rpc::invalid_param(
        "'level' must be one of debug, info, notice, "
        "warning, error, critical, alert, emergency",
        "level", "enum");
  }
  if (session) {
    std::lock_guard lock(session->mu_);
    session->log_level_ = n;
  }
  co_return json::value(json::object{});
}

}  // namespace hearth::mcpserver
