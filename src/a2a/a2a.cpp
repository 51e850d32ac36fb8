#include "a2a/a2a.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>

#include "common/ascii.hpp"
#include "common/random.hpp"
#include "common/rfc3986.hpp"
#include "common/sha256.hpp"
#include "mcpserver/catalog.hpp"
#include "net/event_stream.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/params.hpp"

namespace hearth::a2a {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kJsonType = "application/json";
/// The HTTP+JSON binding's media type (spec 11.1).
constexpr std::string_view kRestType = "application/a2a+json";
/// ListTasks' page size: 50 when not given, 1 to 100 (a2a.proto ListTasksRequest.page_size).
constexpr std::int64_t kDefaultPageSize = 50;
constexpr std::int64_t kMaxPageSize = 100;

/// A skill: an endpoint with the name it has as an MCP tool.
using Skill = mcpserver::NamedEndpoint;

/// The decoded parameters of a query string, in order.
std::vector<std::pair<std::string, std::string>> query_pairs(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    auto key = rfc3986::percent_decode(item.substr(0, eq), true);
    auto value = rfc3986::percent_decode(
        eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1), true);
    if (key && value) out.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

/// The A2A-Version a request asks for: the header, else the request parameter (spec 3.6.1).
std::string requested_version(const net::HttpRequest& req) {
  if (auto header = req.header("a2a-version")) return std::string(*header);
  for (auto& [key, value] : query_pairs(req.query)) {
    if (ascii::iequals(key, "A2A-Version")) return value;
  }
  return "";
}

Error version_not_supported(const std::string& asked) {
  return a2a_error(A2aCode::kVersionNotSupported,
                   "A2A version '" + asked +
                       "' is not supported: hearth speaks 1.0 (send A2A-Version: 1.0) and 0.3 "
                       "(no A2A-Version, or 0.3)",
                   json::object{{"requestedVersion", asked}, {"supportedVersions", "1.0, 0.3"}});
}

net::HttpResponse json_response(int status, const json::value& body, std::string_view type) {
  net::HttpResponse res;
  res.status = status;
  res.content_type = std::string(type);
  res.body = json::dump(body);
  return res;
}

net::HttpResponse rest_failure(const Error& error) {
  auto e = rest_error(error);
  return json_response(e.http_status, e.body, kRestType);
}

/// A JSON-RPC error answer of a request on /a2a, in `v`'s form.
net::HttpResponse rpc_failure(const json::value& id, const Error& error, Version v) {
  return json_response(
      200, json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", error_object(error, v)}},
      kJsonType);
}

/// The methods of one version, with the other version's spelling of each: a request that used
/// the wrong one is told which header to send.
struct MethodNames {
  std::string_view send, stream, get, cancel, subscribe;
};
constexpr MethodNames kMethods03{"message/send", "message/stream", "tasks/get", "tasks/cancel",
                                 "tasks/resubscribe"};
constexpr MethodNames kMethods10{"SendMessage", "SendStreamingMessage", "GetTask", "CancelTask",
                                 "SubscribeToTask"};
constexpr std::array<std::string_view, 4> kPush03{
    "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"};
constexpr std::array<std::string_view, 4> kPush10{
    "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"};

/// How SendMessage is to be answered (SendMessageConfiguration; 0.3 MessageSendConfiguration).
struct SendConfig {
  bool wait = true;
  std::optional<std::int64_t> history_length;
};

Result<SendConfig> read_config(const json::object& params, Version v) {
  SendConfig out;
  const auto* c = params.if_contains("configuration");
  if (c == nullptr || c->is_null()) return out;
  if (!c->is_object()) {
    return rpc::invalid_param("'configuration' must be an object", "configuration", "type");
  }
  const auto& config = c->get_object();
  if (v == Version::k10) {
    HEARTH_ASSIGN_OR_RETURN(bool immediately, rpc::bool_param(config, "returnImmediately"));
    out.wait = !immediately;
  } else if (const auto* b = config.if_contains("blocking"); b && !b->is_null()) {
    if (!b->is_bool()) {
      return rpc::invalid_param("'configuration.blocking' must be a boolean",
                                "configuration.blocking", "type");
    }
    out.wait = b->get_bool();
  }
  HEARTH_ASSIGN_OR_RETURN(out.history_length, rpc::int_param(config, "historyLength", 0));
  const char* push = v == Version::k10 ? "taskPushNotificationConfig" : "pushNotificationConfig";
  if (const auto* p = config.if_contains(push); p && !p->is_null()) {
    return a2a_error(A2aCode::kPushNotificationNotSupported,
                     "Push Notification is not supported (capabilities.pushNotifications is "
                     "false): poll GetTask or stream instead");
  }
  return out;
}

}  // namespace

class Agent : public std::enable_shared_from_this<Agent> {
 public:
  Agent(host::Host& host, asio::any_io_executor executor, Options options)
      : host_(host), executor_(std::move(executor)), options_(std::move(options)) {
    add_methods(v03_, Version::k03);
    add_methods(v10_, Version::k10);
  }

  /// GET /.well-known/agent-card.json: the card in the shape the request's A2A-Version asks for.
  net::HttpResponse card(const net::HttpRequest& req) const {
    const Version v = card_version(requested_version(req));
    auto res = json_response(200, agent_card(host_, options_, v), kJsonType);
    // The card changes when services are reloaded: cached, but checked again before each use.
    res.headers = {{"Vary", "A2A-Version"},
                   {"Cache-Control", "no-cache"},
                   {"ETag", "\"" + sha256_hex(res.body).substr(0, 32) + "\""}};
    return res;
  }

  /// POST /a2a: the JSON-RPC binding of the version the request asks for.
  asio::awaitable<net::HttpResponse> post(net::HttpRequest req) {
    const std::string asked = requested_version(req);
    const auto version = parse_version(asked);
    auto parsed = json::parse_text(req.body);
    json::value id = nullptr;
    if (parsed.ok()) {
      if (const auto* i = json::member(parsed.value(), "id"); i && !i->is_object()) id = *i;
    }
    if (!version) co_return rpc_failure(id, version_not_supported(asked), Version::k10);
    const Version v = *version;
    if (!parsed.ok()) {
      co_return rpc_failure(
          nullptr, Error::make(ErrorCode::kParseError, "Parse error: " + parsed.error().message),
          v);
    }
    json::value message = std::move(parsed).value();
    const MethodNames& names = v == Version::k10 ? kMethods10 : kMethods03;
    const std::string method = json::string_member(message, "method");
    if (message.is_object() && (method == names.stream || method == names.subscribe)) {
      static const json::object kNone;
      const auto* params = json::member(message, "params");
      if (params != nullptr && !params->is_null() && !params->is_object()) {
        co_return rpc_failure(id, rpc::invalid_param("params must be an object", "params", "type"),
                              v);
      }
      const json::object& p = params && params->is_object() ? params->get_object() : kNone;
      Frame frame = [id](json::value result) {
        return json::dump(rpc::make_result_response(id, std::move(result)));
      };
      auto res = method == names.stream ? stream_send(p, v, std::move(frame), method)
                                        : stream_subscribe(p, v, std::move(frame));
      if (!res.ok()) co_return rpc_failure(id, res.error(), v);
      co_return std::move(res).value();
    }
    auto session = std::make_shared<rpc::Session>("a2a", nullptr);
    auto answer =
        co_await (v == Version::k10 ? v10_ : v03_).handle_value(std::move(message), session);
    session->close();
    if (!answer) {
      net::HttpResponse res;
      res.status = 202;
      co_return res;
    }
    shape_errors(*answer, v);
    co_return json_response(200, *answer, kJsonType);
  }

  /// Below /a2a/: the HTTP+JSON binding (A2A 1.0 only).
  asio::awaitable<net::HttpResponse> rest(net::HttpRequest req) {
    const std::string asked = requested_version(req);
    const auto version = parse_version(asked);
    if (!version) co_return rest_failure(version_not_supported(asked));
    if (*version != Version::k10) {
      co_return rest_failure(a2a_error(
          A2aCode::kVersionNotSupported,
          "hearth's HTTP+JSON binding speaks A2A 1.0: send the header A2A-Version: 1.0 (a "
          "request without it is A2A 0.3, spec 3.6.2; hearth's 0.3 binding is JSON-RPC at " +
              std::string(kBasePath) + ")",
          json::object{{"requestedVersion", asked.empty() ? "0.3" : asked},
                       {"supportedVersions", "1.0"}}));
    }
    const std::string_view path = std::string_view(req.path).substr(kBasePath.size());
    const std::string& m = req.method;
    const bool get = m == "GET" || m == "HEAD";
    auto body_object = [&req]() -> Result<json::object> {
      if (ascii::trim(req.body, " \t\r\n").empty()) return json::object{};
      HEARTH_ASSIGN_OR_RETURN(auto value, json::parse_text(req.body));
      if (!value.is_object()) {
        return rpc::invalid_param("the body must be a JSON object", "body", "type");
      }
      return std::move(value.get_object());
    };
    auto answer = [](Result<json::value> result) {
      if (!result.ok()) return rest_failure(result.error());
      return json_response(200, result.value(), kRestType);
    };
    auto not_allowed = [](std::string allow) {
      auto res =
          json_response(405,
                        json::object{{"error", json::object{{"code", 405},
                                                            {"status", "UNIMPLEMENTED"},
                                                            {"message", "method not allowed"}}}},
                        kRestType);
      res.headers.emplace_back("Allow", std::move(allow));
      return res;
    };
    const Frame bare = [](const json::value& event) { return json::dump(event); };

    if (path == "/message:send" || path == "/message:stream") {
      if (m != "POST") co_return not_allowed("POST");
      auto params = body_object();
      if (!params.ok()) co_return rest_failure(params.error());
      if (path == "/message:send") {
        // Named: GCC 12 may destroy a temporary argument of a co_awaited coroutine twice.
        json::object p = std::move(params).value();
        std::string method = "SendMessage";
        co_return answer(co_await send(std::move(p), Version::k10, std::move(method)));
      }
      auto res = stream_send(params.value(), Version::k10, bare, "SendStreamingMessage");
      if (!res.ok()) co_return rest_failure(res.error());
      co_return std::move(res).value();
    }
    if (path == "/tasks") {
      if (!get) co_return not_allowed("GET, HEAD");
      json::object params;
      for (auto& [key, value] : query_pairs(req.query)) {
        // Query values are strings (spec 11.5): numbers and booleans are read back as such, and
        // anything else is left as written for the parameter checks to name.
        if (key == "pageSize" || key == "historyLength") {
          std::int64_t n = 0;
          const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
          if (ec == std::errc() && end == value.data() + value.size()) {
            params[key] = n;
            continue;
          }
        } else if (key == "includeArtifacts" && (value == "true" || value == "false")) {
          params[key] = value == "true";
          continue;
        }
        params[key] = value;
      }
      co_return answer(list(params));
    }
    if (path == "/extendedAgentCard") {
      if (!get) co_return not_allowed("GET, HEAD");
      co_return rest_failure(extended_card_unsupported());
    }
    constexpr std::string_view kTasks = "/tasks/";
    if (path.substr(0, kTasks.size()) == kTasks) {
      std::string_view tail = path.substr(kTasks.size());
      if (tail.find('/') != std::string_view::npos) {
        // /tasks/{id}/pushNotificationConfigs[/{configId}]
        co_return rest_failure(push_unsupported());
      }
      std::string_view verb;
      if (const auto colon = tail.rfind(':'); colon != std::string_view::npos) {
        verb = tail.substr(colon + 1);
        tail = tail.substr(0, colon);
      }
      auto id = rfc3986::percent_decode(tail, false);
      if (!id || id->empty()) {
        co_return rest_failure(
            rpc::invalid_param("the task id in the path is malformed", "id", "format"));
      }
      json::object params{{"id", *id}};
      if (verb.empty()) {
        if (!get) co_return not_allowed("GET, HEAD");
        for (auto& [key, value] : query_pairs(req.query)) {
          if (key != "historyLength") continue;
          std::int64_t n = 0;
          const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
          params[key] = ec == std::errc() && end == value.data() + value.size()
                            ? json::value(n)
                            : json::value(value);
        }
        co_return answer(get_task(params, Version::k10));
      }
      if (verb == "cancel") {
        if (m != "POST") co_return not_allowed("POST");
        co_return answer(cancel(params, Version::k10));
      }
      if (verb == "subscribe") {
        // POST in the specification's text and the JS SDK, GET in a2a.proto's HTTP rule.
        if (m != "POST" && !get) co_return not_allowed("POST, GET, HEAD");
        auto res = stream_subscribe(params, Version::k10, bare);
        if (!res.ok()) co_return rest_failure(res.error());
        co_return std::move(res).value();
      }
    }
    co_return rest_failure(
        Error::make(ErrorCode::kMethodNotFound,
                    "no A2A HTTP+JSON operation at " + req.method + " " + req.path +
                        " (the operations: POST /a2a/message:send, POST /a2a/message:stream, GET "
                        "/a2a/tasks, GET /a2a/tasks/{id}, POST /a2a/tasks/{id}:cancel, POST "
                        "/a2a/tasks/{id}:subscribe)"));
  }

  const Options& options() const { return options_; }
  host::Host& host() { return host_; }

 private:
  /// What a watcher of a task is told: its status changed, or it has a new artifact.
  struct Update {
    const json::object* artifact = nullptr;  ///< null: a status change
  };
  struct Task;
  using Watcher = std::function<void(const Task&, const Update&)>;
  struct Task : TaskRecord {
    std::map<std::uint64_t, Watcher> watchers;  ///< streams and waiting sends, by id
  };
  /// Writes one stream event as an SSE data line (a JSON-RPC response, or bare).
  using Frame = std::function<std::string(json::value)>;

  static Error push_unsupported() {
    return a2a_error(A2aCode::kPushNotificationNotSupported,
                     "Push Notification is not supported (capabilities.pushNotifications is "
                     "false): poll GetTask or stream instead");
  }

  static Error extended_card_unsupported() {
    return a2a_error(A2aCode::kUnsupportedOperation,
                     "hearth has no extended Agent Card (capabilities.extendedAgentCard is false): "
                     "the card at " +
                         std::string(kCardPath) + " is all there is");
  }

  static Error task_not_found(const std::string& id) {
    return a2a_error(A2aCode::kTaskNotFound, "Task not found: " + id, json::object{{"taskId", id}});
  }

  /// What a message asks for: the skill and its input; an error naming what is missing.
  Result<std::pair<Skill, json::value>> read_skill(const json::object& message) {
    std::string skill_id;
    json::value input = nullptr;
    if (const auto* meta = message.if_contains("metadata"); meta && meta->is_object()) {
      for (const char* key : {"skillId", "skill"}) {
        if (const auto* s = meta->get_object().if_contains(key); s && s->is_string()) {
          skill_id = std::string(s->get_string());
        }
      }
    }
    for (const auto& part : message.at("parts").as_array()) {
      const auto* data = json::member(part, "data");
      if (data == nullptr) continue;
      const auto* d = data->if_object();
      if (const auto* s = d ? d->if_contains("skill") : nullptr;
          s && s->is_string() && d->contains("input")) {
        if (skill_id.empty()) skill_id = std::string(s->get_string());
        input = d->at("input");
      } else {
        input = *data;
      }
      break;
    }
    auto skills = mcpserver::name_tools(*host_.services());
    if (skill_id.empty() && skills.size() == 1) skill_id = skills.front().name;
    std::string names;
    for (const auto& s : skills) names += (names.empty() ? "" : ", ") + s.name;
    if (skill_id.empty()) {
      return rpc::invalid_param(
          "name the skill in message.metadata.skillId (or a data part {\"skill\", \"input\"}); "
          "skills: " +
              names,
          "message.metadata.skillId", "required");
    }
    for (auto& s : skills) {
      if (s.name == skill_id) return std::make_pair(s, std::move(input));
    }
    return rpc::invalid_param("no skill '" + skill_id + "'; skills: " + names,
                              "message.metadata.skillId", "enum");
  }

  /// Starts a task for the request's message; the call runs on and finishes it.
  Result<std::shared_ptr<Task>> start(const json::object& params, Version v, std::string method) {
    const auto* m = params.if_contains("message");
    if (m == nullptr) return rpc::invalid_param("'message' is required", "message", "required");
    HEARTH_ASSIGN_OR_RETURN(json::object message, read_message(*m, v));
    if (const auto* task_id = message.if_contains("taskId")) {
      // Every task here ends in one turn: a later message cannot continue it.
      const std::string id(task_id->get_string());
      std::lock_guard lock(mu_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return task_not_found(id);
      return a2a_error(A2aCode::kUnsupportedOperation,
                       "Task " + id + " is " + std::string(state_name(it->second->state, v)) +
                           ": each hearth task is one call; send a new message without taskId",
                       json::object{{"taskId", id}});
    }
    HEARTH_ASSIGN_OR_RETURN(auto asked, read_skill(message));
    auto task = std::make_shared<Task>();
    task->id = random_hex(16);
    task->context_id = random_hex(16);
    if (const auto* c = message.if_contains("contextId")) {
      task->context_id = std::string(c->get_string());
    }
    if (!message.contains("messageId")) message["messageId"] = random_hex(16);
    message["taskId"] = task->id;
    message["contextId"] = task->context_id;
    task->history.push_back(std::move(message));
    {
      std::lock_guard lock(mu_);
      stamp(*task);
      tasks_[task->id] = task;
      order_.push_back(task->id);
      forget_old();
    }
    asio::co_spawn(executor_,
                   run(shared_from_this(), task, std::move(asked.first), std::move(asked.second),
                       std::move(method)),
                   asio::detached);
    return task;
  }

  /// Forgets the oldest finished tasks beyond max_tasks; running ones stay until they end.
  void forget_old() {
    for (auto it = order_.begin(); tasks_.size() > options_.max_tasks && it != order_.end();) {
      auto task = tasks_.find(*it);
      if (task == tasks_.end() || terminal(task->second->state)) {
        if (task != tasks_.end()) tasks_.erase(task);
        it = order_.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// A new status time and place in ListTasks' order (under mu_).
  void stamp(Task& t) {
    t.updated = std::chrono::system_clock::now();
    t.timestamp = iso_timestamp(t.updated);
    t.sequence = ++sequence_;
  }

  /// Changes a task's state and tells its watchers (under mu_).
  void set_state(Task& t, TaskState state, json::value message) {
    t.state = state;
    t.status_message = std::move(message);
    stamp(t);
    for (auto& [id, w] : t.watchers) w(t, Update{});
    if (terminal(state)) t.watchers.clear();
  }

  static asio::awaitable<void> run(std::shared_ptr<Agent> self, std::shared_ptr<Task> task,
                                   Skill skill, json::value input, std::string method) {
    {
      std::lock_guard lock(self->mu_);
      if (task->state != TaskState::kSubmitted) co_return;  // canceled before it began
      self->set_state(*task, TaskState::kWorking, nullptr);
    }
    const auto start = std::chrono::steady_clock::now();
    host::Caller caller;
    caller.transport = "a2a";
    auto result = co_await self->host_.call(*skill.service, skill.endpoint->id, std::move(input),
                                            std::move(caller));
    host::AuditRecord record;
    record.service = skill.service->manifest.name;
    record.endpoint = skill.endpoint->id;
    record.method = std::move(method);
    record.transport = "a2a";
    record.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    if (!result.ok()) record.error = result.error().code;
    co_await self->host_.audit(std::move(record));
    std::lock_guard lock(self->mu_);
    if (terminal(task->state)) co_return;  // canceled meanwhile: the answer is dropped
    if (!result.ok()) {
      json::value reply = agent_message(result.error().message, to_json(result.error()), task->id,
                                        task->context_id);
      task->history.push_back(reply);
      self->set_state(*task, TaskState::kFailed, std::move(reply));
      self->forget_old();
      co_return;
    }
    json::value data = result.value().is_object()
                           ? result.value()
                           : json::value(json::object{{"result", result.value()}});
    task->artifacts.push_back(
        json::object{{"artifactId", random_hex(16)},
                     {"name", skill.name},
                     {"parts", json::array{json::object{{"data", std::move(data)}}}}});
    const auto& artifact = task->artifacts.back().as_object();
    for (auto& [id, w] : task->watchers) w(*task, Update{&artifact});
    json::value reply =
        agent_message(skill.name + " completed", nullptr, task->id, task->context_id);
    task->history.push_back(reply);
    self->set_state(*task, TaskState::kCompleted, std::move(reply));
    self->forget_old();
  }

  /// Waits until `task` ends (SendMessage without returnImmediately, message/send blocking).
  asio::awaitable<void> wait(std::shared_ptr<Task> task) {
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
    timer->expires_at(asio::steady_timer::time_point::max());
    {
      std::lock_guard lock(mu_);
      if (terminal(task->state)) co_return;
      auto ex = timer->get_executor();
      task->watchers.emplace(++watcher_ids_, [timer, ex](const Task& t, const Update&) {
        if (terminal(t.state)) asio::post(ex, [timer] { timer->cancel(); });
      });
    }
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  }

  /// SendMessage / message/send: the task (1.0: in a {"task"} wrapper), when it has ended unless
  /// asked to return at once.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): a coroutine's parameters are values
  asio::awaitable<Result<json::value>> send(json::object params, Version v, std::string method) {
    HEARTH_CO_ASSIGN_OR_RETURN(SendConfig config, read_config(params, v));
    HEARTH_CO_ASSIGN_OR_RETURN(auto task, start(params, v, std::move(method)));
    if (config.wait) {
      co_await wait(task);
    }
    std::lock_guard lock(mu_);
    auto t = task_in(*task, v, TaskShape{.history_length = config.history_length});
    if (v == Version::k10) co_return json::value(json::object{{"task", std::move(t)}});
    co_return json::value(std::move(t));
  }

  Result<json::value> get_task(const json::object& params, Version v) {
    HEARTH_ASSIGN_OR_RETURN(std::string id, rpc::required_string(params, "id"));
    HEARTH_ASSIGN_OR_RETURN(auto history, rpc::int_param(params, "historyLength", 0));
    std::lock_guard lock(mu_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return task_not_found(id);
    return json::value(task_in(*it->second, v, TaskShape{.history_length = history}));
  }

  Result<json::value> cancel(const json::object& params, Version v) {
    HEARTH_ASSIGN_OR_RETURN(std::string id, rpc::required_string(params, "id"));
    std::lock_guard lock(mu_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return task_not_found(id);
    Task& t = *it->second;
    if (terminal(t.state)) {
      return a2a_error(
          A2aCode::kTaskNotCancelable,
          "Task " + id + " cannot be canceled: it is " + std::string(state_name(t.state, v)),
          json::object{{"taskId", id}, {"state", state_name(t.state, v)}});
    }
    set_state(t, TaskState::kCanceled, nullptr);
    return json::value(task_in(t, v));
  }

  /// ListTasks (1.0): the tasks kept, most recently updated first, a page at a time; the page
  /// token is the place in that order of the last task given.
  Result<json::value> list(const json::object& params) {
    HEARTH_ASSIGN_OR_RETURN(auto context, rpc::string_param(params, "contextId", false));
    HEARTH_ASSIGN_OR_RETURN(auto status, rpc::string_param(params, "status", false));
    std::optional<TaskState> state;
    if (status && !status->empty() && *status != "TASK_STATE_UNSPECIFIED") {
      state = state_from_name(*status);
      if (!state) {
        return rpc::invalid_param("status '" + *status +
                                      "' is not a task state: TASK_STATE_SUBMITTED, "
                                      "TASK_STATE_WORKING, TASK_STATE_COMPLETED, "
                                      "TASK_STATE_FAILED, TASK_STATE_CANCELED, "
                                      "TASK_STATE_REJECTED, TASK_STATE_INPUT_REQUIRED, "
                                      "TASK_STATE_AUTH_REQUIRED",
                                  "status", "enum");
      }
    }
    HEARTH_ASSIGN_OR_RETURN(auto page_size, rpc::int_param(params, "pageSize", 1, kMaxPageSize));
    HEARTH_ASSIGN_OR_RETURN(auto token, rpc::string_param(params, "pageToken", false));
    std::optional<std::uint64_t> before;
    if (token && !token->empty()) {
      std::uint64_t n = 0;
      const auto [end, ec] = std::from_chars(token->data(), token->data() + token->size(), n);
      if (ec != std::errc() || end != token->data() + token->size()) {
        return rpc::invalid_param("pageToken is not one this agent gave (nextPageToken)",
                                  "pageToken", "format");
      }
      before = n;
    }
    HEARTH_ASSIGN_OR_RETURN(auto history, rpc::int_param(params, "historyLength", 0));
    HEARTH_ASSIGN_OR_RETURN(auto after_text,
                            rpc::string_param(params, "statusTimestampAfter", false));
    std::optional<std::chrono::system_clock::time_point> after;
    if (after_text) {
      after = parse_timestamp(*after_text);
      if (!after) {
        return rpc::invalid_param(
            "statusTimestampAfter must be an ISO 8601 date-time "
            "(\"2025-10-28T10:30:00Z\")",
            "statusTimestampAfter", "format");
      }
    }
    HEARTH_ASSIGN_OR_RETURN(bool artifacts, rpc::bool_param(params, "includeArtifacts"));
    const std::int64_t size = page_size.value_or(kDefaultPageSize);

    std::lock_guard lock(mu_);
    std::vector<const Task*> matching;
    for (const auto& [id, task] : tasks_) {
      if (context && task->context_id != *context) continue;
      if (state && task->state != *state) continue;
      if (after && task->updated < *after) continue;
      matching.push_back(task.get());
    }
    std::sort(matching.begin(), matching.end(),
              [](const Task* a, const Task* b) { return a->sequence > b->sequence; });
    json::array page;
    std::string next;
    std::uint64_t last = 0;
    for (const Task* t : matching) {
      if (before && t->sequence >= *before) continue;
      if (static_cast<std::int64_t>(page.size()) == size) {
        next = std::to_string(last);  // more follow: they come after the last one given
        break;
      }
      page.push_back(
          task_in(*t, Version::k10, TaskShape{.history_length = history, .artifacts = artifacts}));
      last = t->sequence;
    }
    return json::value(json::object{{"tasks", std::move(page)},
                                    {"nextPageToken", std::move(next)},
                                    {"pageSize", size},
                                    {"totalSize", matching.size()}});
  }

  /// SendStreamingMessage / message/stream: a new task's events.
  Result<net::HttpResponse> stream_send(const json::object& params, Version v, Frame frame,
                                        std::string method) {
    HEARTH_ASSIGN_OR_RETURN(SendConfig config, read_config(params, v));
    (void)config;  // a stream shows the whole task whatever was asked
    HEARTH_ASSIGN_OR_RETURN(auto task, start(params, v, std::move(method)));
    return open_stream(task, v, std::move(frame));
  }

  /// SubscribeToTask / tasks/resubscribe: a running task's events from now on.
  Result<net::HttpResponse> stream_subscribe(const json::object& params, Version v, Frame frame) {
    HEARTH_ASSIGN_OR_RETURN(std::string id, rpc::required_string(params, "id"));
    std::shared_ptr<Task> task;
    {
      std::lock_guard lock(mu_);
      auto it = tasks_.find(id);
      if (it == tasks_.end()) return task_not_found(id);
      task = it->second;
      if (terminal(task->state)) {
        return a2a_error(A2aCode::kUnsupportedOperation,
                         "Task " + id + " has ended (" + std::string(state_name(task->state, v)) +
                             "): there is nothing to subscribe to; GetTask gives its result",
                         json::object{{"taskId", id}});
      }
    }
    return open_stream(task, v, std::move(frame));
  }

  /// The task first, then its updates, as server-sent events; the stream ends at a terminal
  /// state (spec 3.1.2).
  net::HttpResponse open_stream(const std::shared_ptr<Task>& task, Version v, Frame frame) {
    auto events = std::make_shared<net::EventStream>(executor_, std::chrono::seconds(15));
    net::HttpResponse res;
    res.status = 200;
    res.content_type = "text/event-stream";
    res.stream = events;
    auto send = [events, frame = std::move(frame)](json::value event) {
      events->send(frame(std::move(event)));
    };
    std::lock_guard lock(mu_);
    Task& t = *task;
    send(task_event(t, v));
    if (terminal(t.state)) {
      // It ended before the stream began (a fast skill): the stream still gives its artifacts
      // and ends with the final status update, as it would have had it watched the task.
      for (const auto& artifact : t.artifacts) send(artifact_event(t, artifact.as_object(), v));
      send(status_event(t, v));
      events->end();
      return res;
    }
    const std::uint64_t watcher = ++watcher_ids_;
    t.watchers.emplace(watcher, [send, events, v](const Task& watched, const Update& update) {
      if (update.artifact != nullptr) {
        send(artifact_event(watched, *update.artifact, v));
        return;
      }
      send(status_event(watched, v));
      if (terminal(watched.state)) events->end();
    });
    // A stream whose peer went away stops watching.
    events->on_cancel(
        [weak_self = weak_from_this(), weak_task = std::weak_ptr<Task>(task), watcher] {
          auto owner = weak_self.lock();
          auto watched = weak_task.lock();
          if (!owner || !watched) return;
          std::lock_guard guard(owner->mu_);
          watched->watchers.erase(watcher);
        });
    return res;
  }

  void add_methods(rpc::Dispatcher& d, Version v) {
    const MethodNames& names = v == Version::k10 ? kMethods10 : kMethods03;
    const MethodNames& other = v == Version::k10 ? kMethods03 : kMethods10;
    d.add(std::string(names.send),
          [this, v, name = std::string(names.send)](
              const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
            HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
            // Named: GCC 12 may destroy a temporary argument of a co_awaited coroutine twice.
            json::object p = *params;
            std::string method = name;
            co_return co_await send(std::move(p), v, std::move(method));
          });
    d.add(std::string(names.get),
          [this, v](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
            HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
            co_return get_task(*params, v);
          });
    d.add(std::string(names.cancel),
          [this, v](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
            HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
            co_return cancel(*params, v);
          });
    // A stream is the whole HTTP answer: it cannot be one member of a batch.
    for (std::string_view stream : {names.stream, names.subscribe}) {
      d.add(std::string(stream),
            [name =
                 std::string(stream)](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
              co_return Error::make(ErrorCode::kInvalidRequest,
                                    name + " answers with a stream: send it alone, not in a batch");
            });
    }
    for (std::string_view push : v == Version::k10 ? kPush10 : kPush03) {
      d.add(std::string(push), [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
        co_return push_unsupported();
      });
    }
    if (v == Version::k10) {
      d.add("ListTasks",
            [this](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
              HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
              co_return list(*params);
            });
      d.add("GetExtendedAgentCard",
            [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
              co_return extended_card_unsupported();
            });
    } else {
      d.add("agent/getAuthenticatedExtendedCard",
            [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
              co_return a2a_error(A2aCode::kExtendedAgentCardNotConfigured,
                                  "hearth has no authenticated extended Agent Card");
            });
    }
    // The other version's names: the request is told which A2A-Version to send.
    const std::string hint =
        v == Version::k10
            ? " is an A2A 0.3 method: send it without the A2A-Version header (or with 0.3); "
              "this request was read as A2A 1.0"
            : " is an A2A 1.0 method: send the header A2A-Version: 1.0; this request was read "
              "as A2A 0.3 (no A2A-Version header)";
    std::vector<std::string_view> foreign{other.send, other.stream, other.get, other.cancel,
                                          other.subscribe};
    if (v == Version::k03) foreign.insert(foreign.end(), {"ListTasks", "GetExtendedAgentCard"});
    for (std::string_view p : v == Version::k10 ? kPush03 : kPush10) foreign.push_back(p);
    for (std::string_view name : foreign) {
      d.add(std::string(name),
            [message = "Method not found: " + std::string(name) +
                       hint](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
              co_return Error::make(ErrorCode::kMethodNotFound, message);
            });
    }
  }

  host::Host& host_;
  asio::any_io_executor executor_;
  Options options_;
  rpc::Dispatcher v03_;
  rpc::Dispatcher v10_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Task>> tasks_;
  std::deque<std::string> order_;  ///< task ids, oldest first
  std::uint64_t sequence_ = 0;
  std::uint64_t watcher_ids_ = 0;
};

Result<std::shared_ptr<Agent>> add_routes(net::Routes& routes, host::Host& host,
                                          asio::any_io_executor executor, Options options) {
  auto agent = std::make_shared<Agent>(host, std::move(executor), std::move(options));
  const std::vector<std::string> a2a_headers = {"A2A-Version", "A2A-Extensions",
                                                "X-A2A-Extensions"};
  net::Route card;
  card.path = std::string(kCardPath);
  card.methods = {"GET"};
  // Open: the card holds no secret, and a client must read it to learn which scheme the calls
  // need. The Host and Origin checks still run first (docs/security.md).
  card.access = net::Access::kOpen;
  card.cors_request_headers = {"A2A-Version"};
  card.handler = [agent](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    co_return agent->card(req);
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(card)));
  net::Route rpc;
  rpc.path = std::string(kBasePath);
  rpc.methods = {"POST"};
  rpc.access = net::Access::kToken;
  rpc.cors_request_headers = a2a_headers;
  rpc.handler = [agent](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    co_return co_await agent->post(std::move(req));
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(rpc)));
  net::Route rest;
  rest.path = std::string(kBasePath) + "/";
  rest.methods = {"GET", "POST", "DELETE"};
  rest.access = net::Access::kToken;
  rest.cors_request_headers = a2a_headers;
  rest.handler = [agent](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    co_return co_await agent->rest(std::move(req));
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(rest)));
  return agent;
}

}  // namespace hearth::a2a
