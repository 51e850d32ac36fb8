#include "appserver/server.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "agent/interpret.hpp"
#include "agentapp/store/native.hpp"
#include "appserver/tool_policy.hpp"
#include "common/ascii.hpp"
#include "common/blocking.hpp"
#include "common/clock.hpp"
#include "common/on_strand.hpp"
#include "common/random.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"
#include "schema/schema.hpp"

namespace hearth::appserver {

namespace asio = boost::asio;

namespace {

std::string now_text() {
  return utc_timestamp(std::chrono::system_clock::now());
}

std::string new_id(std::string_view prefix) {
  return std::string(prefix) + random_hex(12);
}

Error not_ready(std::string_view why) {
  return Error::make(ErrorCode::kInvalidRequest, std::string(why));
}

Result<std::string> required_text(const json::value& params, std::string_view key) {
  const auto* v = json::member(params, key);
  if (v == nullptr || !v->is_string() || v->get_string().empty()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "params." + std::string(key) + " must be a non-empty string",
                       json::object{{"param", key}});
  }
  return std::string(v->get_string());
}

/// A bridge method as a tool: its parameters, and whether a person must allow each call.
struct ToolSpec {
  std::string_view capability;
  std::string_view method;
  std::string_view description;
  std::string_view parameters;  ///< JSON Schema text
  bool writes = false;
};

constexpr ToolSpec kTools[] = {
    {"lime.storage", "get", "Read a value the app stored under a key.",
     R"({"type":"object","properties":{"key":{"type":"string"}},"required":["key"]})", false},
    {"lime.storage", "put", "Store a JSON value under a key in the app's storage.",
     R"({"type":"object","properties":{"key":{"type":"string"},"value":{}},"required":["key","value"]})",
     true},
    {"lime.storage", "query",
     "Run one SQL statement on the app's SQLite database (SELECT to read; other statements "
     "change data and need the person's approval).",
     R"({"type":"object","properties":{"sql":{"type":"string"},"params":{"type":"array"}},"required":["sql"]})",
     true},
    {"lime.artifacts", "create", "Save an artifact of one of the app's artifact types.",
     R"({"type":"object","properties":{"type":{"type":"string"},"content":{},"mediaType":{"type":"string"}},"required":["type","content"]})",
     true},
    {"lime.artifacts", "read", "Read an artifact by id.",
     R"({"type":"object","properties":{"id":{"type":"string"}},"required":["id"]})", false},
    {"lime.artifacts", "list", "List the app's artifacts.", R"({"type":"object","properties":{}})",
     false},
    {"lime.evidence", "record", "Record a fact in the app's evidence log.",
     R"({"type":"object","properties":{"kind":{"type":"string"},"detail":{"type":"object"}},"required":["kind"]})",
     false},
};

std::string tool_name(std::string_view capability, std::string_view method) {
  std::string out(capability);
  for (auto& c : out) {
    if (c == '.') c = '_';
  }
  return out + "__" + std::string(method);
}

bool is_select(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r')) {
    ++i;
  }
  return ascii::iequals(sql.substr(i, 6), "select");
}

constexpr std::string_view kCompleteTool = "complete";
constexpr std::string_view kAskTool = "ask_person";

asio::awaitable<Result<json::value>> call_on(std::function<Result<json::value>()> work) {
  co_return work();
}

/// A backend tool's call: `tools/call` with the model's arguments and the turn in `_meta`, its
/// result as the model reads it.
// NOLINTNEXTLINE(performance-unnecessary-value-param): a coroutine keeps its parameters
asio::awaitable<Result<json::value>> call_backend_tool(decltype(BackendTools::call) call,
                                                       std::string app, std::string service,
                                                       std::string name, json::object arguments,
                                                       json::object meta) {
  json::object params{
      {"name", std::move(name)}, {"arguments", std::move(arguments)}, {"_meta", std::move(meta)}};
  auto r = co_await call(std::move(app), std::move(service), std::move(params));
  if (!r.ok()) co_return r;
  co_return read_tool_result(r.value());
}

}  // namespace

struct AppServer::State : std::enable_shared_from_this<AppServer::State> {
  State(const asio::any_io_executor& io_executor, agentapp::AppStore& a, agentapp::Bridge& b,
        std::unique_ptr<Store> s, Options o)
      : io(io_executor), apps(a), bridge(b), store(std::move(s)), options(std::move(o)) {}

  asio::any_io_executor io;
  asio::thread_pool pool{1};  ///< the server's one thread: every member below is touched there
  agentapp::AppStore& apps;
  agentapp::Bridge& bridge;
  std::unique_ptr<Store> store;
  Options options;
  std::shared_ptr<agent::ModelClient> model;          ///< as the daemon's --model-stream says
  std::shared_ptr<agent::ModelClient> model_flipped;  ///< the other way, for a turn's `stream`
  bool stopped = false;
  std::atomic<bool> stop_requested{false};

  struct Conn {
    enum class Phase { kNew, kInitializing, kReady } phase = Phase::kNew;
    json::object client;
    std::weak_ptr<rpc::Session> session;
  };
  std::map<std::uint64_t, Conn> conns;
  /// The connections that receive a session's events, each with the last event it was given
  /// (read or pushed), so that events reach it once each, in order, whichever daemon stored
  /// them.
  std::map<std::string, std::map<std::uint64_t, std::int64_t>> listeners;
  std::vector<Event> unstored;  ///< emitted, not yet stored (emit, flush_events)
  bool flush_posted = false;
  std::uint64_t notices = 0;  ///< the bus subscription (a shared engine)
  std::uint64_t resyncs = 0;

  struct Action {
    explicit Action(const asio::any_io_executor& e) : timer(e) {}
    std::string id;
    std::string turn;
    json::object request;  ///< what action.required said
    std::optional<json::object> response;
    asio::steady_timer timer;
  };
  struct Turn {
    TurnRecord record;
    agent::Cancel cancel;
    bool cancelled = false;
    std::string trace;
    std::shared_ptr<Action> action;               ///< waiting for a person
    std::map<std::string, ToolBinding> bindings;  ///< the app's bound tools, by name
    std::optional<bool> stream;                   ///< the turn's `stream`, when it gave one
  };
  struct Live {
    std::string active;  ///< the running turn
    std::deque<std::shared_ptr<Turn>> queued;
    std::map<std::string, std::shared_ptr<Turn>> turns;
  };
  std::map<std::string, Live> live;  ///< by session id
  std::map<std::string, std::shared_ptr<Action>> actions;

  asio::any_io_executor executor() { return pool.get_executor(); }

  // --- connections ----------------------------------------------------------------------------

  Result<Conn*> conn_of(const std::shared_ptr<rpc::Session>& session) {
    if (!session) {
      return not_ready("the App Server needs a connection (HTTP or WebSocket)");
    }
    auto [it, added] = conns.try_emplace(session->id());
    if (added) {
      it->second.session = session;
      std::weak_ptr<State> weak = shared_from_this();
      const auto id = session->id();
      session->on_close([weak, id] {
        if (auto s = weak.lock()) {
          asio::post(s->pool, [s, id] {
            s->conns.erase(id);
            for (auto& [_, conns] : s->listeners) conns.erase(id);
          });
        }
      });
    }
    return &it->second;
  }

  /// The connection, when it finished the handshake.
  Result<Conn*> ready(const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(Conn * c, conn_of(session));
    if (c->phase == Conn::Phase::kNew) {
      return not_ready("initialize first: this connection has not said who it is (clientInfo)");
    }
    if (c->phase == Conn::Phase::kInitializing) {
      return not_ready("send the initialized notification first");
    }
    return c;
  }

  /// Pushes the session's events after `after` to `conn` from now on; `after` unknown (-1):
  /// after the last one stored.
  void listen(const std::string& session, const std::shared_ptr<rpc::Session>& conn,
              std::int64_t after = -1) {
    if (!conn || !conn->can_push()) return;
    auto& conns = listeners[session];
    auto it = conns.find(conn->id());
    if (after < 0) {
      // A connection that listens already has had every event up to its own mark.
      if (it != conns.end()) return;
      auto s = store_now().session(session);
      after = s.ok() && s.value() ? s.value()->last_seq : 0;
    }
    if (it == conns.end()) {
      conns.emplace(conn->id(), after);
    } else {
      it->second = std::max(it->second, after);
    }
  }

  /// Pushes `e` to the session's listeners that have not had it.
  void deliver(const Event& e) {
    auto it = listeners.find(e.session);
    if (it == listeners.end()) return;
    std::string text;
    for (auto l = it->second.begin(); l != it->second.end();) {
      auto c = conns.find(l->first);
      auto rs = c == conns.end() ? nullptr : c->second.session.lock();
      if (!rs || rs->closed()) {
        l = it->second.erase(l);
        continue;
      }
      if (e.seq > l->second) {
        if (text.empty()) {
          text = json::serialize(rpc::make_notification("agentSession/event", e.to_json()));
        }
        rs->push(text);
        l->second = e.seq;
      }
      ++l;
    }
  }

  /// Another daemon stored events of `session` (empty: any session, after a resync): this
  /// daemon's listeners get the ones they have not had.
  void catch_up(const std::string& session) {
    std::vector<std::string> sessions;
    if (!session.empty()) {
      if (listeners.contains(session)) sessions.push_back(session);
    } else {
      for (const auto& [id, _] : listeners) sessions.push_back(id);
    }
    for (const auto& id : sessions) {
      auto it = listeners.find(id);
      if (it == listeners.end() || it->second.empty()) continue;
      std::int64_t after = std::numeric_limits<std::int64_t>::max();
      for (const auto& [_, last] : it->second) after = std::min(after, last);
      auto events = store->events(id, after);
      if (!events.ok()) {
        spdlog::warn("app server: reading events of session {} another daemon stored: {}", id,
                     events.error().message);
        continue;
      }
      for (const auto& e : events.value()) deliver(e);
    }
  }

  /// Listens on the bus for the events other daemons store (a shared engine).
  void join_bus() {
    if (!options.engine || !options.engine->shared()) return;
    std::weak_ptr<State> weak = shared_from_this();
    auto& bus = options.engine->bus();
    notices = bus.subscribe("appserver.event", [weak](const storage::Notice& notice) {
      std::error_code ec;
      auto payload = json::parse(notice.payload, ec);
      if (ec || !payload.is_object()) return;
      std::string session = json::string_member(payload, "session");
      if (session.empty()) return;
      if (auto s = weak.lock()) {
        asio::post(s->pool, [s, session] { s->catch_up(session); });
      }
    });
    resyncs = bus.on_resync([weak] {
      if (auto s = weak.lock()) asio::post(s->pool, [s] { s->catch_up(""); });
    });
  }

  void leave_bus() {
    if (!options.engine || !options.engine->shared()) return;
    options.engine->bus().unsubscribe(notices);
    options.engine->bus().unsubscribe(resyncs);
  }

  // --- events ---------------------------------------------------------------------------------

  /// Queues an event: it is stored and then pushed by the flush posted when the first of the
  /// queued events came, so that events arriving while the server's thread is busy (several
  /// sessions streaming) share one transaction and one flush to disk. Any other use of the
  /// store (store_now()) flushes first: nothing is stored or read out of order.
  void emit(const std::string& session, const std::string& turn, const std::string& trace,
            std::string type, json::object payload) {
    Event e;
    e.session = session;
    e.turn = turn;
    e.trace = trace;
    e.type = std::move(type);
    e.at = now_text();
    e.payload = std::move(payload);
    unstored.push_back(std::move(e));
    if (flush_posted) return;
    flush_posted = true;
    asio::post(pool, [weak = weak_from_this()] {
      if (auto st = weak.lock()) {
        st->flush_posted = false;
        st->flush_events();
      }
    });
  }

  /// Stores the queued events in one transaction, then pushes each to its listeners (and tells
  /// the other daemons of a shared engine).
  void flush_events() {
    if (unstored.empty()) return;
    std::vector<Event> batch = std::exchange(unstored, {});
    if (auto stored = store->append(batch); !stored.ok()) {
      spdlog::error("app server: {} events were not stored: {}", batch.size(),
                    stored.error().message);
      return;
    }
    const bool shared = options.engine && options.engine->shared();
    for (const auto& e : batch) {
      if (e.seq == 0) {
        spdlog::error("app server: an event of session {} was not stored: no such session",
                      e.session);
        continue;
      }
      // Events another daemon stored before this one first, so each listener gets them in order.
      if (shared) catch_up(e.session);
      deliver(e);
      if (shared) {
        const auto told = options.engine->bus().publish(
            "appserver.event",
            json::serialize(json::object{{"session", e.session}, {"seq", e.seq}}));
        if (!told.ok()) {
          spdlog::warn("app server: telling the other daemons of an event: {}",
                       told.error().message);
        }
      }
    }
  }

  /// The store, with the queued events stored first.
  Store& store_now() {
    flush_events();
    return *store;
  }

  void evidence(const std::string& app, std::string_view kind, const json::object& detail) {
    if (auto r = bridge.record(app, kind, detail); !r.ok()) {
      spdlog::warn("app server: evidence {} of app '{}' not recorded: {}", kind, app,
                   r.error().message);
    }
  }

  // --- methods --------------------------------------------------------------------------------

  Result<json::value> initialize(const json::value& params,
                                 const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(Conn * c, conn_of(session));
    if (c->phase != Conn::Phase::kNew) {
      return not_ready("this connection is already initialized");
    }
    const auto* info = json::member(params, "clientInfo");
    const auto* name = info != nullptr ? json::member(*info, "name") : nullptr;
    if (name == nullptr || !name->is_string() || name->get_string().empty()) {
      return Error::make(ErrorCode::kInvalidParams,
                         "initialize needs clientInfo.name: the host names itself",
                         json::object{{"param", "clientInfo"}});
    }
    c->client = info->get_object();
    c->phase = Conn::Phase::kInitializing;
    return json::value(json::object{
        {"protocolVersion", kProtocolVersion},
        {"serverInfo", json::object{{"name", "hearth"}}},
        {"capabilities",
         json::object{
             {"agentSession",
              json::object{{"modes", json::array{"new", "resume", "continue", "fork"}},
                           {"queuePolicies", json::array{"queue", "reject", "interrupt"}}}},
             {"model", !options.model.base_url.empty()}}}});
  }

  Result<json::value> initialized(const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(Conn * c, conn_of(session));
    if (c->phase == Conn::Phase::kNew) return not_ready("initialize first");
    c->phase = Conn::Phase::kReady;
    return json::value(nullptr);
  }

  /// The app, enabled, declaring lime.agent and allowed it for the workspace.
  Result<agentapp::InstalledApp> agent_app(const std::string& app_id,
                                           const std::string& workspace) {
    auto app = apps.find(app_id);
    if (!app.ok()) {
      return Error::make(ErrorCode::kInvalidParams, "no app named '" + app_id + "' is installed");
    }
    if (!app.value().enabled) {
      return Error::make(ErrorCode::kPermissionDenied, "the app '" + app_id + "' is not enabled",
                         json::object{{"stage", "enabled"}});
    }
    HEARTH_ASSIGN_OR_RETURN(auto listed, bridge.list(app_id, workspace));
    for (const auto& c : listed) {
      if (c.at("capability") != "lime.agent") continue;
      if (c.at("status") == "available") return app;
      return Error::make(
          ErrorCode::kPermissionDenied,
          "lime.agent is blocked for the app: " + std::string(c.at("reason").as_string()),
          json::object{{"stage", c.at("stage")}, {"capability", "lime.agent"}});
    }
    return Error::make(ErrorCode::kPermissionDenied,
                       "the app '" + app_id + "' does not declare lime.agent",
                       json::object{{"stage", "declared"}, {"capability", "lime.agent"}});
  }

  Result<json::value> start(const json::value& params,
                            const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto* conn, ready(session));
    (void)conn;
    HEARTH_ASSIGN_OR_RETURN(auto app_id, required_text(params, "appId"));
    HEARTH_ASSIGN_OR_RETURN(auto workspace, required_text(params, "workspaceId"));
    std::string mode = json::string_member(params, "mode");
    if (mode.empty()) mode = "new";
    if (mode != "new" && mode != "resume" && mode != "continue" && mode != "fork") {
      return Error::make(ErrorCode::kInvalidParams,
                         "params.mode must be new, resume, continue or fork");
    }
    HEARTH_ASSIGN_OR_RETURN(auto app, agent_app(app_id, workspace));
    const std::string key = json::string_member(params, "idempotencyKey");
    if (!key.empty()) {
      HEARTH_ASSIGN_OR_RETURN(auto found, store_now().session_by_key(app_id, workspace, key));
      if (found) {
        listen(found->id, session);
        auto out = found->to_json();
        out["reused"] = true;
        return json::value(std::move(out));
      }
    }
    std::string parent;
    if (mode != "new") {
      HEARTH_ASSIGN_OR_RETURN(parent, required_text(params, "sessionId"));
      HEARTH_ASSIGN_OR_RETURN(auto earlier, owned(parent, app_id, workspace));
      if (mode == "resume") {
        listen(earlier.id, session);
        auto out = earlier.to_json();
        out["reused"] = true;
        return json::value(std::move(out));
      }
    }
    SessionRecord s;
    s.id = new_id("ses_");
    s.app = app.name;
    s.workspace = workspace;
    s.entry = json::string_member(params, "entryKey");
    if (const auto* ref = json::member(params, "businessObjectRef")) s.business_ref = *ref;
    s.mode = mode;
    s.parent = parent;
    s.idempotency_key = key;
    s.created_at = now_text();
    HEARTH_ASSIGN_OR_RETURN(const bool added, store_now().add_session(s));
    if (!added) {
      // The same key was used at the same moment (through another daemon): that session.
      HEARTH_ASSIGN_OR_RETURN(auto found, store_now().session_by_key(app_id, workspace, key));
      if (!found) return Error::make(ErrorCode::kConflict, "the session could not be added");
      listen(found->id, session);
      auto out = found->to_json();
      out["reused"] = true;
      return json::value(std::move(out));
    }
    listen(s.id, session, 0);  // a new session: no event yet
    emit(s.id, "", new_id("trc_"), "status",
         json::object{{"status", "started"}, {"mode", mode}, {"appVersion", app.version}});
    evidence(app.name, "agent.session.started",
             json::object{{"sessionId", s.id},
                          {"workspace", workspace},
                          {"mode", mode},
                          {"entryKey", s.entry},
                          {"parent", parent}});
    HEARTH_ASSIGN_OR_RETURN(auto stored, store_now().session(s.id));
    return json::value(stored ? stored->to_json() : s.to_json());
  }

  /// The session `id` when it belongs to the app and the workspace.
  Result<SessionRecord> owned(const std::string& id, const std::string& app,
                              const std::string& workspace) {
    HEARTH_ASSIGN_OR_RETURN(auto found, store_now().session(id));
    if (!found || (!app.empty() && found->app != app)) {
      return Error::make(ErrorCode::kInvalidParams, "no session " + id + " for this app",
                         json::object{{"param", "sessionId"}});
    }
    if (found->workspace != workspace) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "the session " + id + " belongs to another workspace",
                         json::object{{"param", "workspaceId"}});
    }
    return *found;
  }

  /// The session a request names (sessionId, workspaceId) on a connection that finished its
  /// handshake, when it belongs to that workspace.
  Result<SessionRecord> addressed(const json::value& params,
                                  const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto* conn, ready(session));
    (void)conn;
    HEARTH_ASSIGN_OR_RETURN(auto id, required_text(params, "sessionId"));
    HEARTH_ASSIGN_OR_RETURN(auto workspace, required_text(params, "workspaceId"));
    return owned(id, json::string_member(params, "appId"), workspace);
  }

  Result<json::value> read(const json::value& params,
                           const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto s, addressed(params, session));
    const std::string& id = s.id;
    std::int64_t after = 0;
    if (const auto* a = json::member(params, "afterSeq"); a != nullptr) {
      if (!a->is_int64() || a->get_int64() < 0) {
        return Error::make(ErrorCode::kInvalidParams, "params.afterSeq must be an integer >= 0");
      }
      after = a->get_int64();
    }
    HEARTH_ASSIGN_OR_RETURN(auto turns, store_now().turns(id));
    HEARTH_ASSIGN_OR_RETURN(auto events, store_now().events(id, after));
    json::array turn_list;
    for (const auto& t : turns) turn_list.emplace_back(t.to_json());
    json::array event_list;
    for (const auto& e : events) event_list.emplace_back(e.to_json());
    json::array pending;
    for (const auto& [aid, action] : actions) {
      auto l = live.find(id);
      if (l != live.end() && l->second.turns.contains(action->turn) && !action->response) {
        pending.emplace_back(action->request);
      }
    }
    // Read and listen in one step on this thread: the events after the last one returned come
    // as notifications, none missing and none twice.
    if (const auto* subscribe = json::member(params, "subscribe");
        subscribe == nullptr || !subscribe->is_bool() || subscribe->get_bool()) {
      listen(id, session, events.empty() ? after : events.back().seq);
    }
    return json::value(json::object{{"session", s.to_json()},
                                    {"turns", std::move(turn_list)},
                                    {"events", std::move(event_list)},
                                    {"pendingActions", std::move(pending)}});
  }

  Result<json::value> turn_start(const json::value& params,
                                 const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto s, addressed(params, session));
    const std::string& id = s.id;
    const std::string& workspace = s.workspace;
    const auto* input = json::member(params, "input");
    if (input == nullptr || input->is_null()) {
      return Error::make(ErrorCode::kInvalidParams, "params.input is required",
                         json::object{{"param", "input"}});
    }
    const std::string key = json::string_member(params, "idempotencyKey");
    if (!key.empty()) {
      HEARTH_ASSIGN_OR_RETURN(auto found, store_now().turn_by_key(id, key));
      if (found) {
        listen(id, session);
        auto out = found->to_json();
        out["reused"] = true;
        return json::value(std::move(out));
      }
    }
    if (options.model.base_url.empty()) {
      return Error::make(ErrorCode::kHandlerError,
                         "no model is configured: start the daemon with --model-url and --model");
    }
    HEARTH_ASSIGN_OR_RETURN(auto app, agent_app(s.app, workspace));
    (void)app;
    json::value schema(nullptr);
    if (const auto* o = json::member(params, "outputSchema"); o != nullptr && !o->is_null()) {
      if (!o->is_object()) {
        return Error::make(ErrorCode::kInvalidParams, "params.outputSchema must be a JSON Schema");
      }
      Problems problems;
      if (!schema::make_draft7_compiler()->compile(*o, {}, problems)) {
        return Error::make(ErrorCode::kInvalidParams, "params.outputSchema is not a valid schema",
                           json::object{{"param", "outputSchema"}});
      }
      schema = *o;
    }
    std::string policy = json::string_member(params, "queuePolicy");
    if (policy.empty()) policy = "queue";
    if (policy != "queue" && policy != "reject" && policy != "interrupt") {
      return Error::make(ErrorCode::kInvalidParams,
                         "params.queuePolicy must be queue, reject or interrupt");
    }
    auto& l = live[id];
    if (!l.active.empty() && policy == "reject") {
      return Error::make(ErrorCode::kConflict, "a turn is running in this session: " + l.active,
                         json::object{{"turnId", l.active}});
    }
    auto turn = std::make_shared<Turn>();
    turn->record.id = new_id("turn_");
    turn->record.session = id;
    turn->record.status = "queued";
    turn->record.input = *input;
    if (const auto* att = json::member(params, "attachments"); att != nullptr && att->is_array()) {
      turn->record.input = json::object{{"input", *input}, {"attachments", *att}};
    }
    turn->record.output_schema = schema;
    turn->record.capability = json::string_member(params, "capabilityId");
    turn->record.idempotency_key = key;
    turn->record.created_at = now_text();
    turn->trace = new_id("trc_");
    if (const auto* stream = json::member(params, "stream");
        stream != nullptr && stream->is_bool()) {
      turn->stream = stream->get_bool();
    }
    HEARTH_ASSIGN_OR_RETURN(const bool added, store_now().add_turn(turn->record));
    if (!added) {
      HEARTH_ASSIGN_OR_RETURN(auto found, store_now().turn_by_key(id, key));
      if (!found) return Error::make(ErrorCode::kConflict, "the turn could not be added");
      listen(id, session);
      auto out = found->to_json();
      out["reused"] = true;
      return json::value(std::move(out));
    }
    listen(id, session);
    l.turns[turn->record.id] = turn;
    if (!l.active.empty() && policy == "interrupt") cancel_turn(*l.turns[l.active], "interrupted");
    l.queued.push_back(turn);
    emit(id, turn->record.id, turn->trace, "status", json::object{{"status", "queued"}});
    json::value accepted(turn->record.to_json());  // as it was accepted, before it may start
    next(id);
    return accepted;
  }

  /// Starts the session's next queued turn when none runs.
  void next(const std::string& session) {
    auto& l = live[session];
    if (!l.active.empty() || l.queued.empty() || stopped) return;
    auto turn = l.queued.front();
    l.queued.pop_front();
    l.active = turn->record.id;
    asio::co_spawn(pool, run(turn), asio::detached);
  }

  void cancel_turn(Turn& t, std::string_view why) {
    if (t.cancelled) return;
    t.cancelled = true;
    t.cancel();
    if (t.action) t.action->timer.cancel();
    (void)why;
  }

  Result<json::value> turn_cancel(const json::value& params,
                                  const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto s, addressed(params, session));
    const std::string& id = s.id;
    std::string turn_id = json::string_member(params, "turnId");
    auto& l = live[id];
    if (turn_id.empty()) turn_id = l.active;
    auto it = l.turns.find(turn_id);
    if (turn_id.empty() || it == l.turns.end() || it->second->record.status == "completed" ||
        it->second->record.status == "failed" || it->second->record.status == "cancelled") {
      return Error::make(ErrorCode::kInvalidParams, "no running or queued turn to cancel",
                         json::object{{"param", "turnId"}});
    }
    auto turn = it->second;
    if (turn->record.status == "queued") {
      // Not started: taken out of the queue and ended here.
      std::erase(l.queued, turn);
      finish(*turn, "cancelled", nullptr, json::object{{"message", "cancelled before it ran"}});
      emit(id, turn->record.id, turn->trace, "cancelled",
           json::object{{"message", "the turn was cancelled before it ran"}});
      return json::value(turn->record.to_json());
    }
    cancel_turn(*turn, "cancelled");
    return json::value(json::object{{"turnId", turn_id}, {"status", "cancelling"}});
  }

  Result<json::value> respond(const json::value& params,
                              const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto s, addressed(params, session));
    const std::string& id = s.id;
    HEARTH_ASSIGN_OR_RETURN(auto action_id, required_text(params, "actionId"));
    HEARTH_ASSIGN_OR_RETURN(auto decision, required_text(params, "decision"));
    if (decision != "allow" && decision != "deny" && decision != "defer") {
      return Error::make(ErrorCode::kInvalidParams, "params.decision must be allow, deny or defer");
    }
    auto it = actions.find(action_id);
    auto l = live.find(id);
    if (it == actions.end() || l == live.end() || !l->second.turns.contains(it->second->turn)) {
      return Error::make(ErrorCode::kInvalidParams,
                         "no action " + action_id + " waits in this session",
                         json::object{{"param", "actionId"}});
    }
    json::object response{{"decision", decision}};
    if (const auto* updated = json::member(params, "updatedInput"); updated != nullptr) {
      if (!updated->is_object()) {
        return Error::make(ErrorCode::kInvalidParams, "params.updatedInput must be an object");
      }
      response["updatedInput"] = *updated;
    }
    if (const auto* answer = json::member(params, "answer"); answer != nullptr) {
      response["answer"] = *answer;
    }
    if (decision == "defer") {
      // Left waiting: the person answers later.
      auto turn = l->second.turns[it->second->turn];
      emit(id, turn->record.id, turn->trace, "status",
           json::object{{"status", "waiting"}, {"actionId", action_id}, {"deferred", true}});
      return json::value(json::object{{"actionId", action_id}, {"decision", "defer"}});
    }
    it->second->response = std::move(response);
    it->second->timer.cancel();
    return json::value(json::object{{"actionId", action_id}, {"decision", decision}});
  }

  Result<json::value> artifact_read(const json::value& params,
                                    const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto* conn, ready(session));
    (void)conn;
    HEARTH_ASSIGN_OR_RETURN(auto app, required_text(params, "appId"));
    HEARTH_ASSIGN_OR_RETURN(auto artifact, required_text(params, "artifactId"));
    agentapp::Invocation call;
    call.app = app;
    call.workspace = json::string_member(params, "workspaceId");
    call.capability = "lime.artifacts";
    call.method = "read";
    call.params = json::object{{"id", artifact}};
    call.caller = "app-server";
    return bridge.invoke(call);
  }

  Result<json::value> capability_list(const json::value& params,
                                      const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto* conn, ready(session));
    (void)conn;
    HEARTH_ASSIGN_OR_RETURN(auto app, required_text(params, "appId"));
    HEARTH_ASSIGN_OR_RETURN(auto list,
                            bridge.list(app, json::string_member(params, "workspaceId")));
    return json::value(json::object{{"appId", app}, {"capabilities", std::move(list)}});
  }

  Result<json::value> evidence_export(const json::value& params,
                                      const std::shared_ptr<rpc::Session>& session) {
    HEARTH_ASSIGN_OR_RETURN(auto* conn, ready(session));
    (void)conn;
    HEARTH_ASSIGN_OR_RETURN(auto app, required_text(params, "appId"));
    std::int64_t after = 0;
    if (const auto* a = json::member(params, "afterSeq"); a != nullptr && a->is_int64()) {
      after = a->get_int64();
    }
    HEARTH_ASSIGN_OR_RETURN(auto exported, bridge.evidence(app, after));
    // The format's provenance of the package installed now; each entry names the package that
    // acted when it was recorded (its own `provenance`).
    HEARTH_ASSIGN_OR_RETURN(auto installed, apps.find(app));
    if (auto* o = exported.if_object()) {
      (*o)["provenance"] = json::object{{"appName", installed.name},
                                        {"appVersion", installed.version},
                                        {"packageHash", installed.package_hash},
                                        {"manifestHash", installed.manifest_hash},
                                        {"standard", "agentapp"},
                                        {"standardVersion", "0.10.0"}};
    }
    return exported;
  }

  // --- a turn ---------------------------------------------------------------------------------

  void finish(Turn& t, std::string status, json::value result, json::object error) {
    t.record.status = std::move(status);
    t.record.result = std::move(result);
    t.record.error = error.empty() ? json::value(nullptr) : json::value(std::move(error));
    t.record.ended_at = now_text();
    if (auto u = store_now().update_turn(t.record); !u.ok()) {
      spdlog::error("app server: turn {} not stored: {}", t.record.id, u.error().message);
    }
  }

  /// A tool as the model is offered it.
  static json::object function_tool(const std::string& name, const std::string& description,
                                    const json::value& parameters) {
    return json::object{
        {"type", "function"},
        {"function",
         json::object{{"name", name}, {"description", description}, {"parameters", parameters}}}};
  }

  /// What a tool's description says of its policy, for the model.
  static std::string policy_note(const ToolPolicy& p) {
    std::string note;
    if (p.dry_run) note += " A dry run is made first.";
    if (p.approval) note += " Needs the person's approval.";
    return note;
  }

  /// The tools of one turn as they are gathered: the list for the model, the names taken, and
  /// the app's own tools bound for the turn.
  struct TurnTools {
    json::array tools;
    std::set<std::string> reserved;
    Turn& turn;
    std::function<void(std::string)> notice;

    /// A tool offered under its app's policy; one that must make a dry run it cannot is not
    /// offered (a requirement hearth cannot honour is never skipped).
    void offer(ToolBinding b) {
      const ToolPolicy& p = *b.policy;
      if (p.dry_run && !takes_dry_run(b.parameters)) {
        notice("the tool " + b.name + " is not offered: its operation " + p.operation +
               " requires a dry run and its input schema has no dryRun argument");
        return;
      }
      reserved.insert(b.name);
      tools.emplace_back(function_tool(b.name, b.description + policy_note(p), b.parameters));
      turn.bindings[b.name] = std::move(b);
    }
  };

  /// The methods of the capabilities the bridge says are available to the app here.
  void add_capability_tools(const SessionRecord& s, TurnTools& out) {
    auto listed = bridge.list(s.app, s.workspace);
    if (!listed.ok()) return;
    for (const auto& c : listed.value()) {
      if (c.at("status") != "available") continue;
      const auto cap = std::string(c.at("capability").as_string());
      for (const auto& spec : kTools) {
        if (spec.capability != cap) continue;
        out.tools.emplace_back(function_tool(
            tool_name(spec.capability, spec.method),
            std::string(spec.description) + (spec.writes ? " Needs the person's approval." : ""),
            json::parse(spec.parameters)));
      }
    }
  }

  /// The app's toolRefs, bound to what the daemon serves.
  void add_bound_tools(const json::object& front_matter, const json::array& operations,
                       TurnTools& out) {
    if (!options.resolve_tool) return;
    const auto* refs = front_matter.if_contains("toolRefs");
    if (refs == nullptr || !refs->is_array()) return;
    for (const auto& ref : refs->get_array()) {
      if (!ref.is_object()) continue;
      const std::string key = json::string_member(ref, "key");
      auto bound = options.resolve_tool(ref.get_object());
      if (!bound.ok()) {
        out.notice("the tool " + key + " is not available: " + bound.error().message);
        continue;
      }
      auto b = std::move(bound).value();
      const auto* op = key.empty() ? nullptr : find_operation(operations, key);
      b.policy = op != nullptr ? policy_for(op) : policy_of_binding(b.writes);
      out.offer(std::move(b));
    }
  }

  /// The tools the app's backends list, named so that the model tells them apart.
  asio::awaitable<void> add_backend_tools(const SessionRecord& s, const json::object& front_matter,
                                          const json::array& operations, TurnTools& out) {
    const auto* services = front_matter.if_contains("services");
    const bool has_backend = services != nullptr && services->is_array() &&
                             std::any_of(services->get_array().begin(), services->get_array().end(),
                                         [](const json::value& sv) {
                                           return json::string_member(sv, "kind") == "app-backend";
                                         });
    if (!options.backend_tools.list || !has_backend) co_return;
    auto found = co_await options.backend_tools.list(s.app);
    for (const auto& u : found["unavailable"].as_array()) {
      out.notice("the tools of the backend " + json::string_member(u, "service") +
                 " are not available: " + json::string_member(u, "reason"));
    }
    const auto& listed_tools = found["tools"].as_array();
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& tool : listed_tools) {
      keys.emplace_back(json::string_member(tool, "service"), json::string_member(tool, "name"));
    }
    const auto names = backend_tool_names(keys, out.reserved);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto& tool = listed_tools[i].as_object();
      ToolBinding b;
      b.name = names[i];
      b.provider = "backend";
      b.target = keys[i].first + "/" + keys[i].second;
      b.description = json::string_member(tool, "description");
      if (b.description.empty()) {
        b.description =
            "The tool " + keys[i].second + " of the app's backend " + keys[i].first + ".";
      }
      b.parameters = tool.at("inputSchema");
      b.package_hash = json::string_member(tool, "packageHash");
      b.policy = policy_for(find_operation(operations, keys[i].second));
      b.call = [call = options.backend_tools.call, app = s.app, service = keys[i].first,
                name = keys[i].second,
                meta = json::object{{"sessionId", s.id},
                                    {"turnId", out.turn.record.id},
                                    {"workspaceId", s.workspace}}](json::object arguments) {
        return call_backend_tool(call, app, service, name, std::move(arguments), meta);
      };
      out.offer(std::move(b));
    }
  }

  /// `ask_person` and `complete` (whose result must match the turn's output schema).
  static void add_turn_tools(const json::value& output_schema, json::array& tools) {
    tools.emplace_back(json::object{
        {"type", "function"},
        {"function",
         json::object{{"name", kAskTool},
                      {"description",
                       "Ask the person a question and wait for the answer (when the task needs "
                       "something only they know)."},
                      {"parameters",
                       json::object{{"type", "object"},
                                    {"properties",
                                     json::object{{"question", json::object{{"type", "string"}}}}},
                                    {"required", json::array{"question"}}}}}}});
    json::object result_schema =
        output_schema.is_object() ? output_schema.as_object() : json::object{};
    tools.emplace_back(json::object{
        {"type", "function"},
        {"function",
         json::object{
             {"name", kCompleteTool},
             {"description",
              "Finish the task with its structured result (it must match the expected "
              "output schema)."},
             {"parameters", json::object{{"type", "object"},
                                         {"properties", json::object{{"result", result_schema}}},
                                         {"required", json::array{"result"}}}}}}});
  }

  /// The tools of the app for this workspace: the available capabilities' methods, the app's
  /// own tools (its toolRefs bound to what the daemon serves, its backends' tools) under the
  /// policies its operations declare, `ask_person` and `complete`.
  asio::awaitable<json::array> tools_for(const SessionRecord& s, std::shared_ptr<Turn> turn) {
    auto self = shared_from_this();
    Turn& t = *turn;
    TurnTools out{
        .tools = {}, .reserved = {}, .turn = t, .notice = [&](std::string text) {
          emit(s.id, t.record.id, t.trace, "progress", json::object{{"notice", std::move(text)}});
        }};
    out.reserved = {std::string(kAskTool), std::string(kCompleteTool)};
    for (const auto& spec : kTools) out.reserved.insert(tool_name(spec.capability, spec.method));
    add_capability_tools(s, out);
    auto app = apps.find(s.app);
    auto manifest = app.ok() ? agentapp::read_manifest(app.value().dir)
                             : Result<agentapp::AppManifest>(app.error());
    if (manifest.ok()) {
      const auto& front_matter = manifest.value().front_matter;
      const json::array operations = agentapp::operations_of(front_matter, app.value().dir);
      add_bound_tools(front_matter, operations, out);
      co_await add_backend_tools(s, front_matter, operations, out);
    }
    add_turn_tools(t.record.output_schema, out.tools);
    co_return std::move(out.tools);
  }

  /// The earlier completed turns of the session (and of the one it forked), the newest
  /// `max_history_turns`, each message capped.
  json::array history(const SessionRecord& s) {
    std::vector<std::pair<std::string, std::string>> turns_text;
    std::vector<std::string> sessions;
    if (!s.parent.empty()) sessions.push_back(s.parent);
    sessions.push_back(s.id);
    const std::size_t cap = options.context.message_cap() / 4;
    for (const auto& id : sessions) {
      auto turns = store_now().turns(id);
      if (!turns.ok()) continue;
      for (const auto& t : turns.value()) {
        if (t.status != "completed") continue;
        turns_text.emplace_back(
            agent::cap_text(
                t.input.is_string() ? std::string(t.input.as_string()) : json::serialize(t.input),
                cap),
            agent::cap_text(json::serialize(t.result), cap));
      }
    }
    const std::size_t skip = turns_text.size() > options.max_history_turns
                                 ? turns_text.size() - options.max_history_turns
                                 : 0;
    json::array messages;
    for (std::size_t i = skip; i < turns_text.size(); ++i) {
      messages.emplace_back(json::object{{"role", "user"}, {"content", turns_text[i].first}});
      messages.emplace_back(json::object{{"role", "assistant"}, {"content", turns_text[i].second}});
    }
    return messages;
  }

  /// The model client; `stream` (a turn's own choice) when given, else the daemon's setting.
  std::shared_ptr<agent::ModelClient> model_client(std::optional<bool> stream) {
    const bool flipped = stream.has_value() && *stream != options.model.stream;
    auto& slot = flipped ? model_flipped : model;
    if (!slot) {
      agent::ModelConfig config = options.model;
      config.stream = flipped ? !options.model.stream : options.model.stream;
      if (options.model_key) {
        auto key = options.model_key();
        if (key.ok()) config.api_key = key.value();
      }
      slot = std::make_shared<agent::ModelClient>(io, config);
    }
    return slot;
  }

  /// How a turn stands while it runs.
  struct Progress {
    int failures = 0;     ///< replies in a row that did not help
    std::string outcome;  ///< empty while it runs
    json::value result;
    json::object error;
  };

  /// The model's `complete`: accepted when the result matches the turn's output schema; else an
  /// error event, and the violations go back to the model.
  json::value check_completion(Turn& t, const SessionRecord& session,
                               const schema::Schema* validator, const json::object& args,
                               Progress& progress) {
    json::value candidate = args.contains("result") ? args.at("result") : json::value(nullptr);
    json::array violations;
    if (validator != nullptr) {
      for (const auto& v : validator->validate(candidate)) {
        violations.emplace_back(json::object{{"path", v.field}, {"message", v.message}});
      }
    }
    if (violations.empty()) {
      progress.outcome = "completed";
      progress.result = std::move(candidate);
      return json::object{{"accepted", true}};
    }
    ++progress.failures;
    emit(session.id, t.record.id, t.trace, "error",
         json::object{{"kind", "output-invalid"},
                      {"message", "the result does not match the output schema"},
                      {"violations", violations}});
    evidence(session.app, "agent.output.invalid",
             json::object{{"turnId", t.record.id}, {"violations", violations}});
    if (progress.failures >= options.max_failures) {
      progress.outcome = "failed";
      progress.error = to_json(Error::make(ErrorCode::kHandlerError,
                                           "the result did not match the output schema",
                                           json::object{{"violations", violations}}));
    }
    return json::object{{"accepted", false}, {"violations", std::move(violations)}};
  }

  /// A plain answer as the turn's result: the JSON the text holds, or the text itself, checked
  /// as `complete`'s result is (check_completion). Returns what check_completion said.
  json::value plain_answer(Turn& t, const SessionRecord& session, const schema::Schema* validator,
                           const std::string& text, Progress& progress) {
    json::value candidate = json::string(text);
    if (validator != nullptr) {
      if (auto v = agent::json_in_text(text)) {
        // The text itself is the result only when the schema takes it and not the JSON in it.
        if (!validator->validate(*v).empty() && validator->validate(candidate).empty()) {
          candidate = json::string(text);
        } else {
          candidate = std::move(*v);
        }
      }
    }
    return check_completion(t, session, validator, json::object{{"result", candidate}}, progress);
  }

  /// What every request of a turn starts with: the system prompt, the earlier turns and this
  /// turn's input.
  json::array first_messages(const SessionRecord& session, const Turn& t) {
    json::array messages;
    messages.emplace_back(json::object{
        {"role", "system"},
        {"content",
         "You work a task for the app '" + session.app + "' (entry '" + session.entry +
             "'). Use the tools to read and change the app's data; a change may wait for the "
             "person's approval (each tool's description says), and a denied change did not "
             "happen. When the task is done, "
             "call `complete` with the result" +
             (t.record.output_schema.is_object()
                  ? " matching this JSON Schema: " + json::serialize(t.record.output_schema)
                  : std::string(".")) +
             " (Answering with the result itself, as JSON, ends the task too.)"}});
    for (auto& m : history(session)) messages.emplace_back(std::move(m));
    messages.emplace_back(json::object{
        {"role", "user"},
        {"content",
         agent::cap_text(t.record.input.is_string() ? std::string(t.record.input.as_string())
                                                    : json::serialize(t.record.input),
                         options.context.message_cap())}});
    return messages;
  }

  /// A streamed answer's text as progress events (its <think> sections held back: reasoning is
  /// not the answer), posted to the server's thread from the model client's.
  std::function<void(std::string_view)> delta_events(const std::shared_ptr<Turn>& turn) {
    std::weak_ptr<State> weak = shared_from_this();
    auto think = std::make_shared<agent::ThinkFilter>();
    return [weak, turn, think](std::string_view text) {
      std::string shown = think->feed(text);
      if (shown.empty()) return;
      if (auto st = weak.lock()) {
        asio::post(st->pool, [st, turn, shown = std::move(shown)] {
          st->emit(turn->record.session, turn->record.id, turn->trace, "progress",
                   json::object{{"delta", shown}});
        });
      }
    };
  }

  /// The model's tool calls of one reply, each answered into `messages`; a malformed call is
  /// told what was wrong and counts against the turn.
  asio::awaitable<void> answer_calls(std::shared_ptr<Turn> turn, const SessionRecord& session,
                                     const std::vector<agent::ToolCall>& calls,
                                     const schema::Schema* validator, Progress& progress,
                                     json::array& messages) {
    Turn& t = *turn;
    for (const auto& call : calls) {
      if (!progress.outcome.empty() || t.cancelled) break;
      json::value tool_result;
      std::string problem = call.problem;
      if (problem.empty()) problem = agent::arguments_problem(call.name, call.arguments);
      boost::system::error_code ec;
      json::value args = json::parse(call.arguments.empty() ? "{}" : call.arguments, ec);
      if (!problem.empty() || ec || !args.is_object()) {
        ++progress.failures;
        tool_result = json::object{{"ok", false}, {"error", problem}};
        emit(session.id, t.record.id, t.trace, "error",
             json::object{{"kind", "bad-tool-call"}, {"message", problem}});
        if (progress.failures >= options.max_failures) {
          progress.outcome = "failed";
          progress.error = to_json(Error::make(ErrorCode::kHandlerError, problem));
        }
      } else if (call.name == kCompleteTool) {
        tool_result = check_completion(t, session, validator, args.as_object(), progress);
      } else {
        tool_result = co_await use_tool(turn, session, call, args.as_object());
      }
      messages.emplace_back(json::object{
          {"role", "tool"},
          {"tool_call_id", call.id},
          {"content",
           agent::cap_text(json::serialize(tool_result), options.context.message_cap())}});
    }
  }

  /// The end of a turn: its outcome (cancelled, or failed when it ran out of steps), the last
  /// event, the evidence, and the session's next turn.
  void end_turn(Turn& t, const SessionRecord& session, const agent::ModelConfig& model,
                Progress& progress) {
    const std::string& sid = session.id;
    std::string& outcome = progress.outcome;
    json::object& error = progress.error;
    if (outcome.empty()) {
      if (t.cancelled) {
        outcome = "cancelled";
      } else {
        outcome = "failed";
        error = to_json(Error::make(ErrorCode::kHandlerError,
                                    "the turn used its " + std::to_string(options.max_steps) +
                                        " model requests without completing"));
        emit(sid, t.record.id, t.trace, "error",
             json::object{{"kind", "max-steps"}, {"message", error["message"]}});
      }
    }
    finish(t, outcome, progress.result, error);
    if (outcome == "completed") {
      emit(sid, t.record.id, t.trace, "completed", json::object{{"result", progress.result}});
    } else if (outcome == "cancelled") {
      emit(sid, t.record.id, t.trace, "cancelled",
           json::object{{"message", "the turn was cancelled"}});
    } else {
      emit(sid, t.record.id, t.trace, "status",
           json::object{{"status", "failed"}, {"error", error}});
    }
    evidence(session.app, "agent.turn." + outcome,
             json::object{{"sessionId", sid},
                          {"turnId", t.record.id},
                          {"traceId", t.trace},
                          {"result", progress.result},
                          {"error", error.empty() ? json::value(nullptr) : json::value(error)},
                          {"model", model.model}});
    auto& l = live[sid];
    if (l.active == t.record.id) l.active.clear();
    next(sid);
  }

  asio::awaitable<void> run(std::shared_ptr<Turn> turn) {
    auto self = shared_from_this();
    Turn& t = *turn;
    const std::string sid = t.record.session;
    auto s = store_now().session(sid);
    if (!s.ok() || !s.value()) co_return;
    const SessionRecord session = *s.value();
    t.record.status = "running";
    (void)store_now().update_turn(t.record);
    const auto ev = [&](std::string type, json::object payload) {
      emit(sid, t.record.id, t.trace, std::move(type), std::move(payload));
    };
    ev("status", json::object{{"status", "running"}});
    auto client = model_client(t.stream);
    evidence(session.app, "agent.turn.started",
             json::object{{"sessionId", sid},
                          {"turnId", t.record.id},
                          {"traceId", t.trace},
                          {"input", t.record.input},
                          {"model", client->config().model},
                          {"modelUrl", client->config().base_url}});

    std::shared_ptr<const schema::Schema> validator;
    if (t.record.output_schema.is_object()) {
      Problems problems;
      validator = schema::make_draft7_compiler()->compile(t.record.output_schema, {}, problems);
    }
    json::array messages = first_messages(session, t);
    // The system prompt, the earlier turns and this turn's input are always sent.
    const std::size_t head = messages.size();
    const json::array tools = co_await tools_for(session, turn);
    std::vector<std::string> tool_names;
    for (const auto& tool : tools) {
      tool_names.push_back(json::string_member(*json::member(tool, "function"), "name"));
    }

    Progress progress;
    for (int step = 1; step <= options.max_steps && progress.outcome.empty(); ++step) {
      if (t.cancelled) break;
      ev("progress", json::object{{"step", step}, {"stage", "model.requested"}});
      std::function<void(std::string_view)> on_delta;
      if (client->config().stream) on_delta = delta_events(turn);
      std::function<void(int, std::chrono::milliseconds)> on_retry;
      std::function<void(std::string_view)> on_notice = [&](std::string_view notice) {
        ev("progress", json::object{{"notice", notice}});
      };
      auto reply = co_await client->complete(agent::fit(messages, head, options.context), tools,
                                             t.cancel, on_delta, on_retry, on_notice);
      if (t.cancelled) break;
      if (!reply.ok()) {
        progress.outcome = "failed";
        progress.error = to_json(reply.error());
        ev("error", json::object{{"kind", "model"}, {"message", reply.error().message}});
        break;
      }
      // What the reply means, whatever shape the server gave it (agent/interpret.hpp).
      const agent::Interpreted answer = agent::interpret(reply.value(), tool_names);
      if (!answer.reasoning.empty()) {
        ev("progress", json::object{{"stage", "model.reasoning"},
                                    {"reasoning", agent::cap_text(answer.reasoning, 16000)}});
      }
      agent::Reply kept;  // the conversation keeps the answer and the calls, not the reasoning
      kept.content = answer.text;
      kept.tool_calls = answer.calls;
      messages.emplace_back(agent::kept_message(kept.message(), options.context.message_cap()));
      if (answer.calls.empty()) {
        std::string nudge = "Use a tool. When the task is done, call `complete` with the result.";
        if (!answer.text.empty()) {
          // A plain answer ends the turn when it is a result the output schema accepts.
          auto checked = plain_answer(t, session, validator.get(), answer.text, progress);
          if (!progress.outcome.empty()) break;
          nudge = "Your answer does not end the task: " + json::serialize(checked) +
                  ". Answer again with a result that matches the output schema (or call "
                  "`complete`), or keep working with the tools.";
          if (progress.failures >= options.max_failures) break;
        } else if (++progress.failures >= options.max_failures) {
          progress.outcome = "failed";
          progress.error = to_json(Error::make(
              ErrorCode::kHandlerError, "the model neither called a tool nor answered " +
                                            std::to_string(progress.failures) + " times in a row"));
          ev("error",
             json::object{{"kind", "no-tool-call"}, {"message", progress.error["message"]}});
          break;
        }
        messages.emplace_back(json::object{{"role", "user"}, {"content", nudge}});
        continue;
      }
      co_await answer_calls(turn, session, answer.calls, validator.get(), progress, messages);
    }
    end_turn(t, session, client->config(), progress);
  }

  /// Pauses the turn on an action.required until the person answers (allow or deny; defer
  /// keeps it waiting); nullopt when the turn was cancelled meanwhile. `what` describes the call.
  asio::awaitable<std::optional<json::object>> approval(std::shared_ptr<Turn> turn,
                                                        const SessionRecord& session,
                                                        const agent::ToolCall& call,
                                                        const json::object& args, json::object what,
                                                        std::string kind = "approval") {
    auto self = shared_from_this();
    Turn& t = *turn;
    auto action = std::make_shared<Action>(pool.get_executor());
    action->id = new_id("act_");
    action->turn = t.record.id;
    action->request = std::move(what);
    action->request["actionId"] = action->id;
    action->request["kind"] = kind;
    action->request["toolCallId"] = call.id;
    action->request["arguments"] = args;
    actions[action->id] = action;
    t.action = action;
    t.record.status = "waiting";
    (void)store_now().update_turn(t.record);
    emit(session.id, t.record.id, t.trace, "action.required", action->request);
    while (!action->response && !t.cancelled && !stopped) {
      action->timer.expires_at(asio::steady_timer::time_point::max());
      co_await action->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    actions.erase(action->id);
    t.action.reset();
    if (!action->response) co_return std::nullopt;
    t.record.status = "running";
    (void)store_now().update_turn(t.record);
    const auto decision = std::string(action->response->at("decision").as_string());
    json::object detail{{"turnId", t.record.id}, {"actionId", action->id}, {"kind", kind}};
    for (const auto* key : {"capability", "method", "tool", "provider", "target", "question"}) {
      if (const auto* v = action->request.if_contains(key)) detail[key] = *v;
    }
    // What was allowed or denied, for an app's own tool (its policy and its arguments).
    if (const auto* policy = action->request.if_contains("policy")) {
      detail["policy"] = *policy;
      detail["arguments"] = bounded(args);
    }
    evidence(session.app, "agent.action." + std::string(decision == "allow" ? "allowed" : "denied"),
             detail);
    emit(session.id, t.record.id, t.trace, "status",
         json::object{{"status", "running"}, {"actionId", action->id}, {"decision", decision}});
    co_return *action->response;
  }

  /// The outcome of a tool call: its tool.call event, and what the model reads.
  json::value report_tool(const SessionRecord& session, Turn& t, const agent::ToolCall& call,
                          const Result<json::value>& r) {
    json::object event{{"toolCallId", call.id}, {"name", call.name}};
    json::object answer;
    if (r.ok()) {
      event["status"] = "completed";
      event["result"] = r.value();
      answer["result"] = r.value();
    } else {
      event["status"] = "failed";
      event["error"] = to_json(r.error());
      answer["error"] = r.error().message;
    }
    emit(session.id, t.record.id, t.trace, "tool.call", std::move(event));
    return answer;
  }

  /// A call the person denied: its tool.call event, and what the model reads.
  json::value report_denied(const SessionRecord& session, Turn& t, const agent::ToolCall& call) {
    emit(session.id, t.record.id, t.trace, "tool.call",
         json::object{{"toolCallId", call.id}, {"name", call.name}, {"status", "denied"}});
    return json::object{{"denied", true},
                        {"message", "the person denied this call; it did not happen"}};
  }

  /// A call of one of the app's own tools (a toolRef bound to a LAVS endpoint, a registry
  /// capability or a workspace script; a tool of its backend), under its policy: the app may
  /// still act (enabled, lime.agent granted for the workspace); a dry run first when the policy
  /// asks, shown in the approval; the person's approval when it waits (a denial is evidence and
  /// the model is told it did not happen); then the call, and its evidence.
  asio::awaitable<json::value> use_binding(std::shared_ptr<Turn> turn, const SessionRecord& session,
                                           const agent::ToolCall& call, json::object args) {
    auto self = shared_from_this();
    Turn& t = *turn;
    const ToolBinding binding = t.bindings.at(call.name);
    const ToolPolicy policy = binding.policy ? *binding.policy : policy_of_binding(binding.writes);
    const auto ev = [&](std::string type, json::object payload) {
      emit(session.id, t.record.id, t.trace, std::move(type), std::move(payload));
    };
    json::object started{
        {"toolCallId", call.id},    {"name", call.name}, {"provider", binding.provider},
        {"target", binding.target}, {"arguments", args}, {"status", "started"}};
    if (binding.policy) started["policy"] = policy.to_json();
    ev("tool.call", std::move(started));
    json::object detail{{"turnId", t.record.id},
                        {"tool", binding.name},
                        {"provider", binding.provider},
                        {"target", binding.target}};
    if (!binding.package_hash.empty()) detail["packageHash"] = binding.package_hash;
    if (binding.policy) {
      detail["operation"] =
          policy.operation.empty() ? json::value(nullptr) : json::value(policy.operation);
      detail["sideEffect"] = policy.side_effect;
    }
    // The grants may have changed since the turn started.
    if (auto allowed = agent_app(session.app, session.workspace); !allowed.ok()) {
      detail["ok"] = false;
      detail["refused"] = allowed.error().message;
      evidence(session.app, "agent.tool.refused", detail);
      co_return report_tool(session, t, call, Result<json::value>(allowed.error()));
    }
    json::value dry_run(nullptr);
    if (policy.dry_run) {
      json::object trial = args;
      trial["dryRun"] = true;
      auto tried = co_await binding.call(std::move(trial));
      if (policy.evidence) {
        evidence(session.app, "agent.tool.dryRun",
                 json::object{{"turnId", t.record.id},
                              {"tool", binding.name},
                              {"target", binding.target},
                              {"arguments", bounded(args)},
                              {"ok", tried.ok()},
                              {"result", tried.ok() ? bounded(tried.value())
                                                    : json::value(tried.error().message)}});
      }
      if (!tried.ok()) {
        ev("tool.call", json::object{{"toolCallId", call.id},
                                     {"name", call.name},
                                     {"status", "failed"},
                                     {"dryRun", true},
                                     {"error", to_json(tried.error())}});
        co_return json::object{
            {"error", "the dry run failed, so the call was not made: " + tried.error().message}};
      }
      dry_run = std::move(tried).value();
    }
    std::string decided_by = "policy";
    if (policy.approval) {
      json::object what{{"tool", binding.name},
                        {"provider", binding.provider},
                        {"target", binding.target},
                        {"policy", policy.to_json()}};
      if (policy.dry_run) what["dryRun"] = json::object{{"result", dry_run}};
      auto answer = co_await approval(turn, session, call, args, std::move(what));
      if (!answer) co_return json::object{{"error", "the turn was cancelled"}};
      if (std::string_view(answer->at("decision").as_string()) != "allow") {
        co_return report_denied(session, t, call);
      }
      if (const auto* updated = answer->if_contains("updatedInput")) args = updated->as_object();
      decided_by = "person";
    }
    if (policy.dry_run) args["dryRun"] = false;
    json::object arguments = args;
    auto r = co_await binding.call(std::move(arguments));
    detail["ok"] = r.ok();
    if (binding.policy) detail["approvedBy"] = decided_by;
    if (policy.evidence) {
      detail["arguments"] = bounded(args);
      detail["result"] = r.ok() ? bounded(r.value()) : json::value(r.error().message);
      if (policy.dry_run) detail["dryRun"] = bounded(dry_run);
    }
    evidence(session.app, "agent.tool.called", detail);
    co_return report_tool(session, t, call, r);
  }

  /// One tool call of the model: approval when it writes, then the bridge as the app.
  asio::awaitable<json::value> use_tool(std::shared_ptr<Turn> turn, const SessionRecord& session,
                                        const agent::ToolCall& call, json::object args) {
    auto self = shared_from_this();
    Turn& t = *turn;
    const ToolSpec* spec = nullptr;
    for (const auto& candidate : kTools) {
      if (tool_name(candidate.capability, candidate.method) == call.name) spec = &candidate;
    }
    const auto ev = [&](std::string type, json::object payload) {
      emit(session.id, t.record.id, t.trace, std::move(type), std::move(payload));
    };
    if (spec == nullptr && t.bindings.contains(call.name)) {
      co_return co_await use_binding(turn, session, call, std::move(args));
    }
    if (call.name == kAskTool) {
      // A human-input request: the answer comes with action/respond (answer or updatedInput).
      json::object what{{"question", args.contains("question") ? args.at("question") : ""}};
      auto answer = co_await approval(turn, session, call, args, std::move(what), "input");
      if (!answer) co_return json::object{{"error", "the turn was cancelled"}};
      if (std::string_view(answer->at("decision").as_string()) != "allow") {
        co_return json::object{{"declined", true}, {"message", "the person did not answer"}};
      }
      if (const auto* a = answer->if_contains("answer")) co_return json::object{{"answer", *a}};
      if (const auto* u = answer->if_contains("updatedInput")) {
        co_return json::object{{"answer", *u}};
      }
      co_return json::object{{"answer", nullptr}};
    }
    if (spec == nullptr) {
      ev("tool.call",
         json::object{{"toolCallId", call.id}, {"name", call.name}, {"status", "unknown"}});
      co_return json::object{{"error", "no tool named " + call.name}};
    }
    ev("tool.call", json::object{{"toolCallId", call.id},
                                 {"name", call.name},
                                 {"capability", spec->capability},
                                 {"method", spec->method},
                                 {"arguments", args},
                                 {"status", "started"}});
    bool writes = spec->writes;
    if (spec->method == "query") {
      const auto* sql = args.if_contains("sql");
      writes = !(sql != nullptr && sql->is_string() && is_select(sql->get_string()));
    }
    if (writes) {
      json::object what{{"capability", spec->capability}, {"method", spec->method}};
      auto answer = co_await approval(turn, session, call, args, std::move(what));
      if (!answer) co_return json::object{{"error", "the turn was cancelled"}};
      if (std::string_view(answer->at("decision").as_string()) != "allow") {
        co_return report_denied(session, t, call);
      }
      if (const auto* updated = answer->if_contains("updatedInput")) args = updated->as_object();
    }
    agentapp::Invocation inv;
    inv.app = session.app;
    inv.workspace = session.workspace;
    inv.capability = std::string(spec->capability);
    inv.method = std::string(spec->method);
    inv.params = args;
    inv.caller = "agent:" + session.id;
    std::function<Result<json::value>()> work = [&bridge = bridge, inv] {
      return bridge.invoke(inv);
    };
    std::string lane = inv.app;
    // Not a co_await inside ?: (GCC 12 miscompiles it: the turn never resumed).
    Result<json::value> r = json::value(nullptr);
    if (options.bridge_calls != nullptr) {
      r = co_await options.bridge_calls->run_in(lane, work);
    } else {
      r = work();
    }
    if (!r.ok()) co_return report_tool(session, t, call, r);
    auto answer = report_tool(session, t, call, r);
    if (spec->capability == "lime.artifacts" && spec->method == "create" && r.value().is_object()) {
      const auto& a = r.value().get_object();
      json::object ref{{"partial", false}};
      for (const auto* key : {"id", "type", "mediaType", "sha256", "size"}) {
        if (const auto* v = a.if_contains(key)) ref[key] = *v;
      }
      ev("artifact", std::move(ref));
    }
    co_return answer;
  }

  /// At start: turns a stopped daemon left unfinished end as failed.
  void recover() {
    auto left = store_now().interrupted();
    if (!left.ok()) return;
    for (auto& t : left.value()) {
      Turn turn;
      turn.record = t;
      finish(turn, "failed", nullptr,
             to_json(Error::make(ErrorCode::kHandlerError, "the daemon stopped during the turn")));
      emit(t.session, t.id, "", "status",
           json::object{{"status", "failed"}, {"reason", "the daemon stopped during the turn"}});
    }
  }

  void shutdown() {
    stopped = true;
    leave_bus();
    for (auto& [_, l] : live) {
      for (auto& [id, t] : l.turns) cancel_turn(*t, "stopping");
    }
  }
};

AppServer::AppServer(const asio::any_io_executor& io, agentapp::AppStore& apps,
                     agentapp::Bridge& bridge, std::unique_ptr<Store> store, Options options)
    : state_(std::make_shared<State>(io, apps, bridge, std::move(store), std::move(options))) {
  auto s = state_;
  asio::post(s->pool, [s] {
    s->recover();
    s->join_bus();
  });
}

AppServer::~AppServer() {
  stop();
  // Give the turns a moment to end, then stop the thread whatever still waits (a model request
  // whose I/O threads are gone).
  auto s = state_;
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  asio::post(s->pool, [done] { done->set_value(); });
  finished.wait_for(std::chrono::seconds(2));
  s->pool.stop();
  s->pool.join();
  // The events of turns that ended in the last moment, whose flush the stopped thread did not
  // run (nothing else touches the state now).
  s->flush_events();
}

void AppServer::stop() {
  auto s = state_;
  if (s->stop_requested.exchange(true)) return;
  // Running turns end on their own thread: their model requests are aborted, their waits
  // cancelled. The thread itself is stopped by the destructor.
  asio::post(s->pool, [s] {
    s->shutdown();
    if (s->model) s->model->shutdown();
    if (s->model_flipped) s->model_flipped->shutdown();
  });
}

asio::awaitable<Result<json::value>> AppServer::call(Method method, json::value params,
                                                     const std::shared_ptr<rpc::Session>& session) {
  using Fn =
      Result<json::value> (State::*)(const json::value&, const std::shared_ptr<rpc::Session>&);
  auto s = state_;
  std::function<Result<json::value>()> work;
  if (method == Method::kInitialized) {
    work = [s, session] { return s->initialized(session); };
  } else {
    Fn fn = nullptr;
    switch (method) {
      case Method::kInitialize:
        fn = &State::initialize;
        break;
      case Method::kStart:
        fn = &State::start;
        break;
      case Method::kRead:
        fn = &State::read;
        break;
      case Method::kTurnStart:
        fn = &State::turn_start;
        break;
      case Method::kTurnCancel:
        fn = &State::turn_cancel;
        break;
      case Method::kActionRespond:
        fn = &State::respond;
        break;
      case Method::kArtifactRead:
        fn = &State::artifact_read;
        break;
      case Method::kEvidenceExport:
        fn = &State::evidence_export;
        break;
      case Method::kCapabilityList:
        fn = &State::capability_list;
        break;
      case Method::kInitialized:
        break;
    }
    work = [s, fn, params = std::move(params), session] { return ((*s).*fn)(params, session); };
  }
  return hearth::on(s->pool.get_executor(), call_on(std::move(work)));
}

}  // namespace hearth::appserver
