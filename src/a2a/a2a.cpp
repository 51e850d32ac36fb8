#include "a2a/a2a.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>

#include "common/random.hpp"
#include "mcpserver/catalog.hpp"
#include "net/event_stream.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/params.hpp"

// GCC 12 reports -Wmismatched-new-delete at the end of this file's larger coroutines: Asio
// allocates a frame past its recycling cache with aligned_alloc (thread_info_base::allocate) and
// frees it with the matching aligned_delete, but GCC sees only the awaitable frame's operator
// new/delete pair. A false positive in Boost's headers, silenced here only.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace hearth::a2a {

namespace asio = boost::asio;

namespace {

// A2A's JSON-RPC error codes.
constexpr int kTaskNotFound = -32001;
constexpr int kTaskNotCancelable = -32002;
constexpr int kPushNotSupported = -32003;

Error a2a_error(int code, std::string message, json::value data = nullptr) {
  return Error::make(static_cast<ErrorCode>(code), std::move(message), std::move(data));
}

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const auto t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count()));
  return buf;
}

bool terminal(std::string_view state) {
  return state == "completed" || state == "canceled" || state == "failed" || state == "rejected";
}

/// A skill: an endpoint with the name it has as an MCP tool.
using Skill = mcpserver::NamedEndpoint;

std::vector<Skill> skills_of(const host::Host::ServiceList& services) {
  return mcpserver::name_tools(services);
}

json::object agent_message(std::string text, json::value data, const std::string& task_id,
                           const std::string& context_id) {
  json::array parts{json::object{{"kind", "text"}, {"text", std::move(text)}}};
  if (!data.is_null()) parts.push_back(json::object{{"kind", "data"}, {"data", std::move(data)}});
  return json::object{{"kind", "message"},           {"role", "agent"},
                      {"messageId", random_hex(16)}, {"parts", std::move(parts)},
                      {"taskId", task_id},           {"contextId", context_id}};
}

}  // namespace

json::object agent_card(const host::Host& host, const Options& options) {
  auto services = host.services();
  json::array skills;
  std::string summary;
  for (const auto& skill : skills_of(*services)) {
    const auto& m = skill.service->manifest;
    const auto& e = *skill.endpoint;
    json::value input = mcpserver::endpoint_schema(m, e.id, "input");
    std::string description =
        (e.description.empty() ? e.id + " of " + m.name : e.description) +
        (e.method == manifest::Method::kQuery ? " (query: reads only)" : " (mutation)") +
        ". Send a message with metadata.skillId \"" + skill.name +
        "\" and the input as a data part.";
    if (input.is_object()) {
      description += " Input schema: " + json::dump(mcpserver::resolve_types(input, m.types));
    }
    skills.push_back(json::object{
        {"id", skill.name},
        {"name", m.name + ": " + e.id},
        {"description", std::move(description)},
        {"tags", json::array{json::string(m.name),
                             e.method == manifest::Method::kQuery ? "query" : "mutation"}},
        {"inputModes", json::array{"application/json"}},
        {"outputModes", json::array{"application/json"}}});
  }
  for (const auto& s : *services) summary += (summary.empty() ? "" : ", ") + s->manifest.name;
  const std::string base = options.base_url ? options.base_url() : std::string();
  return json::object{
      {"protocolVersion", kProtocolVersion},
      {"name", options.name},
      {"description", "hearth, a local agent host: its LAVS services as skills (" +
                          (summary.empty() ? std::string("none") : summary) +
                          "). Each message runs one endpoint under the service's permissions."},
      {"url", base + "/a2a"},
      {"preferredTransport", "JSONRPC"},
      {"additionalInterfaces",
       json::array{json::object{{"url", base + "/a2a"}, {"transport", "JSONRPC"}}}},
      {"version", options.version},
      {"capabilities",
       json::object{
           {"streaming", true}, {"pushNotifications", false}, {"stateTransitionHistory", false}}},
      {"securitySchemes",
       json::object{{"hearthToken", json::object{{"type", "http"},
                                                 {"scheme", "bearer"},
                                                 {"description",
                                                  "the daemon's per-launch token (its token "
                                                  "file)"}}}}},
      {"security", json::array{json::object{{"hearthToken", json::array{}}}}},
      {"defaultInputModes", json::array{"application/json"}},
      {"defaultOutputModes", json::array{"application/json"}},
      {"skills", std::move(skills)}};
}

class Agent : public std::enable_shared_from_this<Agent> {
 public:
  Agent(host::Host& host, asio::any_io_executor executor, Options options)
      : host_(host), executor_(std::move(executor)), options_(std::move(options)) {
    add_methods();
  }

  const Options& options() const { return options_; }
  host::Host& host() { return host_; }

  asio::awaitable<net::HttpResponse> post(net::HttpRequest req) {
    auto parsed = json::parse_text(req.body);
    net::HttpResponse res;
    res.content_type = "application/json";
    if (!parsed.ok()) {
      res.body = json::dump(rpc::make_error_response(
          nullptr, Error::make(ErrorCode::kParseError, "Parse error: " + parsed.error().message)));
      co_return res;
    }
    json::value message = std::move(parsed).value();
    const auto* method = json::member(message, "method");
    if (method != nullptr && method->is_string() && method->get_string() == "message/stream") {
      co_return stream(message);
    }
    auto session = std::make_shared<rpc::Session>("a2a", nullptr);
    auto answer = co_await dispatcher_.handle_value(std::move(message), session);
    session->close();
    if (!answer) {
      res.status = 202;
      res.content_type.clear();
      co_return res;
    }
    res.body = json::dump(*answer);
    co_return res;
  }

 private:
  struct Task {
    std::string id;
    std::string context_id;
    std::string state = "submitted";
    json::value status_message = nullptr;
    std::string timestamp;
    json::array history;
    json::array artifacts;
    std::vector<std::function<void(const json::value&, bool)>> watchers;  // streams
  };

  json::object task_json(const Task& t, std::optional<std::int64_t> history_length = {}) const {
    json::object status{{"state", t.state}, {"timestamp", t.timestamp}};
    if (!t.status_message.is_null()) status["message"] = t.status_message;
    json::array history = t.history;
    if (history_length && *history_length >= 0 &&
        history.size() > static_cast<std::size_t>(*history_length)) {
      json::array tail;
      for (std::size_t i = history.size() - static_cast<std::size_t>(*history_length);
           i < history.size(); ++i) {
        tail.push_back(history[i]);
      }
      history = std::move(tail);
    }
    json::object out{{"kind", "task"},
                     {"id", t.id},
                     {"contextId", t.context_id},
                     {"status", std::move(status)},
                     {"history", std::move(history)}};
    if (!t.artifacts.empty()) out["artifacts"] = t.artifacts;
    return out;
  }

  /// What a message asks for: the skill and its input; an error naming what is missing.
  Result<std::pair<Skill, json::value>> read_message(const json::object& message) {
    std::string skill_id;
    json::value input = nullptr;
    if (const auto* meta = message.if_contains("metadata"); meta && meta->is_object()) {
      for (const char* key : {"skillId", "skill"}) {
        if (const auto* s = meta->get_object().if_contains(key); s && s->is_string()) {
          skill_id = std::string(s->get_string());
        }
      }
    }
    const auto* parts = message.if_contains("parts");
    if (parts == nullptr || !parts->is_array() || parts->get_array().empty()) {
      return rpc::invalid_param("message.parts must be a non-empty array", "message.parts",
                                "minItems");
    }
    for (const auto& part : parts->get_array()) {
      const auto* kind = json::member(part, "kind");
      if (kind == nullptr || !kind->is_string() || kind->get_string() != "data") continue;
      const auto* data = json::member(part, "data");
      if (data == nullptr || !data->is_object()) continue;
      const auto& d = data->get_object();
      if (const auto* s = d.if_contains("skill"); s && s->is_string() && d.contains("input")) {
        if (skill_id.empty()) skill_id = std::string(s->get_string());
        input = d.at("input");
      } else if (input.is_null()) {
        input = *data;
      }
      break;
    }
    auto skills = skills_of(*host_.services());
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

  /// Starts a task for `message`; the call runs on and finishes it.
  Result<std::shared_ptr<Task>> start(const json::object& params) {
    const auto* message = params.if_contains("message");
    if (message == nullptr || !message->is_object()) {
      return rpc::invalid_param("'message' must be an object", "message", "type");
    }
    const auto& m = message->get_object();
    if (const auto* role = m.if_contains("role");
        !role || !role->is_string() || role->get_string() != "user") {
      return rpc::invalid_param("message.role must be \"user\"", "message.role", "enum");
    }
    if (const auto* task_id = m.if_contains("taskId"); task_id && task_id->is_string()) {
      // Every task here ends in one turn: a later message cannot continue it.
      std::lock_guard lock(mu_);
      auto it = tasks_.find(std::string(task_id->get_string()));
      if (it == tasks_.end()) return a2a_error(kTaskNotFound, "Task not found");
      return a2a_error(kTaskNotCancelable,
                       "Task " + it->first + " is " + it->second->state +
                           ": each hearth task is one call; send a new message without taskId");
    }
    HEARTH_ASSIGN_OR_RETURN(auto asked, read_message(m));
    auto task = std::make_shared<Task>();
    task->id = random_hex(16);
    task->context_id = random_hex(16);
    if (const auto* c = m.if_contains("contextId"); c && c->is_string()) {
      task->context_id = std::string(c->get_string());
    }
    task->timestamp = now_iso();
    json::object user = m;
    user["taskId"] = task->id;
    user["contextId"] = task->context_id;
    task->history.push_back(std::move(user));
    {
      std::lock_guard lock(mu_);
      tasks_[task->id] = task;
      order_.push_back(task->id);
      forget_old();
    }
    asio::co_spawn(executor_,
                   run(shared_from_this(), task, std::move(asked.first), std::move(asked.second)),
                   asio::detached);
    return task;
  }

  void forget_old() {
    while (order_.size() > options_.max_tasks) {
      auto it = tasks_.find(order_.front());
      if (it != tasks_.end() && !terminal(it->second->state)) break;
      if (it != tasks_.end()) tasks_.erase(it);
      order_.pop_front();
    }
  }

  /// Changes a task's state and tells its streams (under mu_).
  void set_state(Task& t, std::string state, const json::value& message, bool final) {
    t.state = std::move(state);
    t.timestamp = now_iso();
    t.status_message = message;
    json::object status{{"state", t.state}, {"timestamp", t.timestamp}};
    if (!message.is_null()) status["message"] = message;
    json::object event{{"kind", "status-update"},
                       {"taskId", t.id},
                       {"contextId", t.context_id},
                       {"status", std::move(status)},
                       {"final", final}};
    for (auto& w : t.watchers) w(event, final);
    if (final) t.watchers.clear();
  }

  static asio::awaitable<void> run(std::shared_ptr<Agent> self, std::shared_ptr<Task> task,
                                   Skill skill, json::value input) {
    {
      std::lock_guard lock(self->mu_);
      if (task->state != "submitted") co_return;  // canceled before it began
      self->set_state(*task, "working", nullptr, false);
    }
    const auto start = std::chrono::steady_clock::now();
    host::Caller caller;
    caller.transport = "a2a";
    auto result = co_await self->host_.call(*skill.service, skill.endpoint->id, std::move(input),
                                            std::move(caller));
    host::AuditRecord record;
    record.service = skill.service->manifest.name;
    record.endpoint = skill.endpoint->id;
    record.method = "message/send";
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
      self->set_state(*task, "failed", reply, true);
      co_return;
    }
    json::value data = result.value().is_object()
                           ? result.value()
                           : json::value(json::object{{"result", result.value()}});
    json::object artifact{{"artifactId", random_hex(16)},
                          {"name", skill.name},
                          {"parts", json::array{json::object{{"kind", "data"}, {"data", data}}}}};
    task->artifacts.push_back(artifact);
    json::object event{
        {"kind", "artifact-update"}, {"taskId", task->id}, {"contextId", task->context_id},
        {"artifact", artifact},      {"append", false},    {"lastChunk", true}};
    for (auto& w : task->watchers) w(event, false);
    json::value reply =
        agent_message(skill.name + " completed", nullptr, task->id, task->context_id);
    task->history.push_back(reply);
    self->set_state(*task, "completed", reply, true);
  }

  /// Waits until `task` ends (message/send with blocking).
  static asio::awaitable<void> wait(std::shared_ptr<Task> task, std::mutex& mu) {
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
    timer->expires_at(asio::steady_timer::time_point::max());
    {
      std::lock_guard lock(mu);
      if (terminal(task->state)) co_return;
      auto ex = timer->get_executor();
      task->watchers.push_back([timer, ex](const json::value&, bool final) {
        if (final) asio::post(ex, [timer] { timer->cancel(); });
      });
    }
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  }

  void add_methods() {
    dispatcher_.add(
        "message/send",
        [this](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
          HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
          HEARTH_CO_ASSIGN_OR_RETURN(auto task, start(*params));
          bool blocking = true;
          if (const auto* c = params->if_contains("configuration"); c && c->is_object()) {
            if (const auto* b = c->get_object().if_contains("blocking"); b && b->is_bool()) {
              blocking = b->get_bool();
            }
          }
          if (blocking) {
            co_await wait(task, mu_);
          }
          std::lock_guard lock(mu_);
          co_return json::value(task_json(*task));
        });
    dispatcher_.add(
        "tasks/get", [this](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
          HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
          HEARTH_CO_ASSIGN_OR_RETURN(std::string id, rpc::required_string(*params, "id"));
          HEARTH_CO_ASSIGN_OR_RETURN(auto history,
                                     rpc::int_param(*params, "historyLength", 0, 1000000));
          std::lock_guard lock(mu_);
          auto it = tasks_.find(id);
          if (it == tasks_.end()) co_return a2a_error(kTaskNotFound, "Task not found");
          co_return json::value(task_json(*it->second, history));
        });
    dispatcher_.add(
        "tasks/cancel",
        [this](const rpc::Request& request) -> asio::awaitable<Result<json::value>> {
          HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
          HEARTH_CO_ASSIGN_OR_RETURN(std::string id, rpc::required_string(*params, "id"));
          std::lock_guard lock(mu_);
          auto it = tasks_.find(id);
          if (it == tasks_.end()) co_return a2a_error(kTaskNotFound, "Task not found");
          Task& t = *it->second;
          if (terminal(t.state)) {
            co_return a2a_error(kTaskNotCancelable, "Task cannot be canceled: it is " + t.state);
          }
          set_state(t, "canceled", nullptr, true);
          co_return json::value(task_json(t));
        });
    for (const char* name :
         {"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
          "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete"}) {
      dispatcher_.add(name, [](const rpc::Request&) -> asio::awaitable<Result<json::value>> {
        co_return a2a_error(kPushNotSupported, "Push Notification is not supported");
      });
    }
  }

  /// message/stream: the task, then its status and artifact updates, as server-sent events.
  net::HttpResponse stream(const json::value& message) {
    auto events = std::make_shared<net::EventStream>(executor_, std::chrono::seconds(15));
    net::HttpResponse res;
    res.status = 200;
    res.content_type = "text/event-stream";
    res.stream = events;
    json::value id = nullptr;
    if (const auto* i = json::member(message, "id")) id = *i;
    auto send = [events, id](json::value result) {
      events->send(json::dump(rpc::make_result_response(id, std::move(result))));
    };
    const auto* params = json::member(message, "params");
    if (params == nullptr || !params->is_object()) {
      events->send(json::dump(rpc::make_error_response(
          id, rpc::invalid_param("params must be an object", "params", "type"))));
      events->end();
      return res;
    }
    auto task = start(params->get_object());
    if (!task.ok()) {
      events->send(json::dump(rpc::make_error_response(id, task.error())));
      events->end();
      return res;
    }
    std::lock_guard lock(mu_);
    auto& t = *task.value();
    send(task_json(t));
    if (terminal(t.state)) {
      // It ended before the stream began (a fast skill): the stream still gives its artifacts
      // and ends with the final status-update, as it would have had it watched the task.
      for (const auto& artifact : t.artifacts) {
        send(json::object{{"kind", "artifact-update"},
                          {"taskId", t.id},
                          {"contextId", t.context_id},
                          {"artifact", artifact},
                          {"append", false},
                          {"lastChunk", true}});
      }
      json::object status{{"state", t.state}, {"timestamp", t.timestamp}};
      if (!t.status_message.is_null()) status["message"] = t.status_message;
      send(json::object{{"kind", "status-update"},
                        {"taskId", t.id},
                        {"contextId", t.context_id},
                        {"status", std::move(status)},
                        {"final", true}});
      events->end();
      return res;
    }
    t.watchers.push_back([send, events](const json::value& event, bool final) {
      send(event);
      if (final) events->end();
    });
    return res;
  }

  host::Host& host_;
  asio::any_io_executor executor_;
  Options options_;
  rpc::Dispatcher dispatcher_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Task>> tasks_;
  std::deque<std::string> order_;
};

Result<std::shared_ptr<Agent>> add_routes(net::Routes& routes, host::Host& host,
                                          asio::any_io_executor executor, Options options) {
  auto agent = std::make_shared<Agent>(host, std::move(executor), std::move(options));
  net::Route card;
  card.path = "/.well-known/agent-card.json";
  card.methods = {"GET"};
  card.access = net::Access::kToken;
  card.handler = [agent](net::HttpRequest) -> asio::awaitable<net::HttpResponse> {
    net::HttpResponse res;
    res.content_type = "application/json";
    res.body = json::dump(agent_card(agent->host(), agent->options()));
    co_return res;
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(card)));
  net::Route rpc;
  rpc.path = "/a2a";
  rpc.methods = {"POST"};
  rpc.access = net::Access::kToken;
  rpc.handler = [agent](net::HttpRequest req) -> asio::awaitable<net::HttpResponse> {
    co_return co_await agent->post(std::move(req));
  };
  HEARTH_RETURN_IF_ERROR(routes.add(std::move(rpc)));
  return agent;
}

}  // namespace hearth::a2a
