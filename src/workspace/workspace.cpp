#include "workspace/workspace.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <chrono>
#include <limits>
#include <map>

#include "common/random.hpp"
#include "common/strcat.hpp"
#include "json/patch.hpp"
#include "workspace/script.hpp"

namespace hearth::workspace {
namespace asio = boost::asio;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The first member named __proto__ in `v` (its path), if any: a view that copies a state into
/// an object with Object.assign would take it as the object's prototype.
std::optional<std::string> proto_member(const json::value& v, const std::string& path) {
  if (const auto* o = v.if_object()) {
    for (const auto& kv : *o) {
      const std::string child = join_path(path, kv.key());
      if (kv.key() == "__proto__") return child;
      if (auto found = proto_member(kv.value(), child)) return found;
    }
  } else if (const auto* a = v.if_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (auto found = proto_member((*a)[i], index_path(path, i))) return found;
    }
  }
  return std::nullopt;
}

json::object error_object(const Error& e) {
  return to_json(e);
}

/// Console lines of one script, bounded.
struct Console {
  json::array lines;
  std::size_t bytes = 0;
  std::size_t limit = 0;
  bool truncated = false;
  void add(jsworker::LogLevel level, const std::string& message) {
    if (truncated) return;
    if (bytes + message.size() > limit) {
      truncated = true;
      lines.push_back(
          json::object{{"level", "warn"},
                       {"message", "… console output past " + std::to_string(limit / 1024) +
                                       " KiB was dropped (limits.consoleKb)"}});
      return;
    }
    bytes += message.size();
    lines.push_back(json::object{{"level", jsworker::to_string(level)}, {"message", message}});
  }
};

}  // namespace

std::optional<Error> check_state(const StateDef& state, const json::value& value,
                                 std::size_t max_bytes) {
  auto error = [&](const std::string& path, const std::string& keyword, const std::string& message,
                   json::array violations) {
    json::object data{
        {"state", state.name}, {"path", path}, {"keyword", keyword}, {"message", message}};
    if (violations.empty()) {
      violations.push_back(
          json::object{{"path", path}, {"keyword", keyword}, {"message", message}});
    }
    data["violations"] = std::move(violations);
    std::string where = path.empty() ? state.name : state.name + "." + path;
    return Error::make(ErrorCode::kInvalidParams, where + ": " + message + " (" + keyword + ")",
                       std::move(data));
  };
  const std::size_t size = json::serialize(value).size();
  if (size > max_bytes) {
    return error("", "maxSize",
                 "the value is " + std::to_string(size) + " bytes of JSON, over the limit of " +
                     std::to_string(max_bytes) + " (limits.stateKb)",
                 {});
  }
  if (auto path = proto_member(value, "")) {
    return error(*path, "propertyNames", "a member may not be named __proto__", {});
  }
  if (!state.schema) return std::nullopt;
  auto violations = state.schema->validate(value);
  if (violations.empty()) return std::nullopt;
  json::array all;
  for (const auto& v : violations) {
    all.push_back(
        json::object{{"path", v.field}, {"keyword", v.constraint}, {"message", v.message}});
  }
  const auto& first = violations.front();
  return error(first.field, first.constraint, first.message, std::move(all));
}

json::array visible_patch(const Definition& def, const json::array& patch) {
  json::array out;
  for (const auto& op : patch) {
    const auto* o = op.if_object();
    const auto* path = o != nullptr ? o->if_contains("path") : nullptr;
    if (path == nullptr || !path->is_string()) continue;
    // The state is the pointer's first token ("/name/..."), ~1 and ~0 unescaped.
    std::string_view rest = path->get_string();
    if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
    std::string token(rest.substr(0, rest.find('/')));
    std::string name;
    for (std::size_t i = 0; i < token.size(); ++i) {
      if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
        name += token[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        name += token[i];
      }
    }
    const StateDef* s = def.find(name);
    if (s != nullptr && !s->readable()) continue;
    out.push_back(op);
  }
  return out;
}

namespace {

/// An effect's failure as others may see it when the call took a value the model may not read:
/// its code, and a message that cannot echo that value.
json::object withheld_error(const Error& e) {
  return json::object{{"code", static_cast<int>(e.code)},
                      {"message",
                       "the call failed (its details are withheld: it took a value "
                       "the model may not read)"}};
}

}  // namespace

struct Workspace::Change {
  std::string kind = "script";
  std::string actor;
  std::string script;
  bool dry_run = false;
  std::int64_t from_version = 0;
  json::object before;  ///< the committed state it starts from
  json::object after;   ///< the state it would commit
  json::value output;
  std::optional<json::value> completion;
  Console console;
  RunInputs inputs;
  std::optional<std::int64_t> reverts;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

Workspace::Workspace(const asio::any_io_executor& executor, Definition definition, Options options)
    : executor_(executor), def_(std::move(definition)), options_(std::move(options)) {}

Workspace::~Workspace() {
  close();
}

void Workspace::close() {
  if (closed_.exchange(true)) return;
  changes_.close();
  std::lock_guard lock(mu_);
  subscriptions_.clear();
}

std::int64_t Workspace::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

std::vector<std::string> Workspace::notes() const {
  std::lock_guard lock(mu_);
  return notes_;
}

void Workspace::add_note(std::string note) {
  std::lock_guard lock(mu_);
  if (notes_.size() >= 50) notes_.erase(notes_.begin());
  notes_.push_back(std::move(note));
}

std::uint64_t Workspace::add_listener(std::function<void(const ChangeEvent&)> listener) {
  std::lock_guard lock(mu_);
  listeners_.emplace_back(next_listener_, std::move(listener));
  return next_listener_++;
}

void Workspace::remove_listener(std::uint64_t id) {
  std::lock_guard lock(mu_);
  std::erase_if(listeners_, [id](const auto& l) { return l.first == id; });
}

void Workspace::notify(const ChangeEvent& event) {
  std::vector<std::function<void(const ChangeEvent&)>> targets;
  {
    std::lock_guard lock(mu_);
    for (const auto& l : listeners_) targets.push_back(l.second);
  }
  for (const auto& t : targets) t(event);
}

Result<json::value> Workspace::state(std::string_view name, bool operator_view) const {
  const StateDef* s = def_.find(name);
  if (s == nullptr || (!s->is_public && !operator_view)) {
    return Error::make(ErrorCode::kMethodNotFound,
                       "workspace " + def_.name + " has no state '" + std::string(name) + "'",
                       json::object{{"state", name}});
  }
  if (!operator_view && !s->readable()) {
    return Error::make(ErrorCode::kPermissionDenied,
                       std::string(name) + " is write-only: its value cannot be read",
                       json::object{{"state", name}, {"permission", "w"}});
  }
  std::lock_guard lock(mu_);
  const auto* v = state_.if_contains(name);
  return v != nullptr ? *v : json::value(nullptr);
}

std::string Workspace::render(const RenderOptions& options) const {
  std::lock_guard lock(mu_);
  return workspace::render(def_, version_, state_, options);
}

json::object Workspace::render_object(const RenderOptions& options) const {
  std::lock_guard lock(mu_);
  return render_json(def_, version_, state_, options);
}

Status Workspace::check_completion(const json::value& result) const {
  if (!def_.completion_schema) return {};
  auto violations = def_.completion_schema->validate(result);
  if (violations.empty()) return {};
  json::array all;
  for (const auto& v : violations) {
    all.push_back(
        json::object{{"path", v.field}, {"keyword", v.constraint}, {"message", v.message}});
  }
  return Error::make(
      ErrorCode::kInvalidParams,
      "the completion result does not match completion.schema: " + violations.front().message,
      json::object{{"violations", std::move(all)}});
}

Result<json::value> Workspace::from_source(const StateDef& s, const json::value& result) const {
  json::value value = result;
  if (!s.source->pointer.empty()) {
    const json::value* part = json::find_pointer(result, s.source->pointer);
    if (part == nullptr) {
      return Error::make(ErrorCode::kInvalidParams,
                         "the source's result has nothing at " + s.source->pointer);
    }
    value = *part;
  }
  if (auto problem = check_state(s, value, def_.limits.state_bytes)) return *problem;
  return value;
}

asio::awaitable<Status> Workspace::open() {
  auto guard = co_await changes_.lock();
  if (!guard) co_return Error::make(ErrorCode::kInternalError, "the workspace is closed");
  bool needs_services = false;
  for (const auto& s : def_.states) needs_services |= s.source.has_value() || !s.effects.empty();
  if (needs_services && options_.services == nullptr) {
    co_return Error::make(ErrorCode::kInternalError,
                          "workspace " + def_.name +
                              " has sources or side effects, which need the LAVS services: "
                              "serve it with them (hearth serve SERVICES --workspace DIR, or "
                              "--services with the CLI)");
  }

  // The stored state, with states that are new, gone or no longer valid put right.
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<Snapshot>()> load = [store, name] { return store->load(name); };
  auto snapshot = co_await options_.blocking->run(load);
  if (!snapshot.ok()) co_return snapshot.error();
  json::object values;
  bool rewrite = !snapshot->exists;
  for (const auto& s : def_.states) {
    const auto* stored = snapshot->state.if_contains(s.name);
    if (stored != nullptr && !check_state(s, *stored, def_.limits.state_bytes)) {
      values[s.name] = *stored;
      continue;
    }
    if (stored != nullptr) {
      add_note(s.name + ": the stored value no longer matches the definition; reset to initial");
    }
    values[s.name] = s.initial;
    rewrite = true;
  }
  if (snapshot->state.size() != values.size()) rewrite = true;
  const std::int64_t version = snapshot->version;
  if (rewrite) {
    std::function<Status()> reset = [store, name, version, values] {
      return store->reset(name, version, values);
    };
    auto st = co_await options_.blocking->run(reset);
    if (!st.ok()) co_return st.error();
  }
  {
    std::lock_guard lock(mu_);
    version_ = version;
    state_ = std::move(values);
  }

  // The utilities must compile: run the prelude with an empty script.
  if (!def_.utilities_source.empty()) {
    jsworker::Job job;
    json::object empty_state;
    job.request = build_evaluation(def_, empty_state, "", RunInputs{});
    job.timeout = def_.limits.timeout;
    job.label = def_.name + ": utilities";
    auto checked = co_await options_.pool->run(std::move(job));
    if (!checked.ok()) {
      const auto& e = checked.error();
      std::string where;
      if (e.data.is_object()) {
        const auto& d = e.data.get_object();
        if (const auto* f = d.if_contains("file"); f && f->is_string()) where = f->get_string();
        if (const auto* l = d.if_contains("line"); l && l->is_number() && !where.empty()) {
          where += ":" + json::serialize(*l);
        }
      }
      co_return Error::make(ErrorCode::kInternalError,
                            "workspace " + def_.name + ": the utilities do not load" +
                                (where.empty() ? "" : " (" + where + ")") + ": " + e.message);
    }
  }
  guard = AsyncMutex::Guard();  // sources commit changes of their own
  co_return co_await refresh_sources(true);
}

asio::awaitable<Status> Workspace::refresh_sources(bool opening) {
  for (const auto& s : def_.states) {
    if (!s.source) continue;
    const auto& src = *s.source;
    if (src.subscription) {
      if (!opening) continue;
      std::weak_ptr<Workspace> weak = weak_from_this();
      const StateDef* state = &s;
      auto executor = executor_;
      std::function<void(json::value)> on_item = [weak, state, executor](json::value item) {
        asio::co_spawn(
            executor,
            [weak, state, item = std::move(item)]() -> asio::awaitable<void> {
              auto self = weak.lock();
              if (!self || self->closed_) co_return;
              auto value = self->from_source(*state, item);
              if (!value.ok()) {
                self->add_note(state->name + ": an item of its subscription was refused: " +
                               value.error().message);
                co_return;
              }
              json::value v = std::move(value).value();
              auto st = co_await self->commit_source(*state, std::move(v));
              if (!st.ok()) self->add_note(state->name + ": " + st.error().message);
            },
            asio::detached);
      };
      std::string service = src.call.service;
      std::string endpoint = src.call.endpoint;
      json::value input = src.call.input;
      auto handle = co_await options_.services->subscribe(service, endpoint, input, on_item);
      if (!handle.ok()) {
        add_note(strcat(s.name, ": cannot subscribe to ", service, "/", endpoint, ": ",
                        handle.error().message));
        continue;
      }
      std::lock_guard lock(mu_);
      subscriptions_.push_back(std::move(handle).value());
      continue;
    }
    if (opening ? !src.on_open : !src.after_commit) continue;
    std::string service = src.call.service;
    std::string endpoint = src.call.endpoint;
    json::value input = src.call.input;
    std::string actor = "workspace:" + def_.name;
    // A query whose result becomes a state the model may not read.
    const bool confidential = !s.readable();
    auto result = co_await options_.services->call(service, endpoint, input, actor, confidential);
    if (!result.ok()) {
      add_note(strcat(s.name, ": its source ", service, "/", endpoint,
                      " failed: ", result.error().message));
      continue;
    }
    auto value = from_source(s, result.value());
    if (!value.ok()) {
      add_note(strcat(s.name, ": its source ", service, "/", endpoint,
                      " gave a value the state refuses: ", value.error().message));
      continue;
    }
    json::value v = std::move(value).value();
    auto st = co_await commit_source(s, std::move(v));
    if (!st.ok()) add_note(s.name + ": " + st.error().message);
  }
  co_return Status();
}

asio::awaitable<Status> Workspace::commit_source(const StateDef& state, json::value value) {
  auto guard = co_await changes_.lock();
  if (!guard) co_return Error::make(ErrorCode::kInternalError, "the workspace is closed");
  std::int64_t from = 0;
  json::value old;
  {
    std::lock_guard lock(mu_);
    from = version_;
    if (const auto* v = state_.if_contains(state.name)) old = *v;
  }
  if (old == value) co_return Status();
  HistoryEntry entry;
  entry.at_ms = now_ms();
  entry.actor = "source:" + state.source->call.service + "/" + state.source->call.endpoint;
  entry.kind = "source";
  entry.outcome = "committed";
  const std::string base = "/" + json::escape_pointer_token(state.name);
  entry.patch = json::diff(old, value, base);
  entry.inverse = json::diff(value, old, base);
  std::map<std::string, json::value> changed{{state.name, value}};
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<HistoryEntry>()> commit = [store, name, from, changed,
                                                  entry]() mutable -> Result<HistoryEntry> {
    HEARTH_RETURN_IF_ERROR(store->commit(name, from, changed, entry));
    return entry;
  };
  auto committed = co_await options_.blocking->run(commit);
  if (!committed.ok()) co_return committed.error();
  {
    std::lock_guard lock(mu_);
    version_ = *committed->version;
    state_[state.name] = value;
  }
  notify({def_.name, *committed->version, {state.name}, entry.actor, "source"});
  co_return Status();
}

json::value Workspace::resolve_input(const json::value& input, const json::value& changed_value,
                                     const json::object& state) const {
  if (const auto* o = input.if_object()) {
    if (const auto* p = o->if_contains("$value"); p != nullptr && o->size() == 1) {
      const std::string_view ptr = p->is_string() ? std::string_view(p->get_string()) : "";
      const json::value* v = json::find_pointer(changed_value, ptr);
      return v != nullptr ? *v : json::value(nullptr);
    }
    if (const auto* n = o->if_contains("$state"); n != nullptr && n->is_string()) {
      const auto* whole = state.if_contains(n->get_string());
      if (whole == nullptr) return nullptr;
      const auto* ptr = o->if_contains("pointer");
      const json::value* v = json::find_pointer(*whole, ptr != nullptr && ptr->is_string()
                                                            ? std::string_view(ptr->get_string())
                                                            : std::string_view());
      return v != nullptr ? *v : json::value(nullptr);
    }
    json::object out;
    for (const auto& kv : *o) out[kv.key()] = resolve_input(kv.value(), changed_value, state);
    return out;
  }
  if (const auto* a = input.if_array()) {
    json::array out;
    for (const auto& e : *a) out.push_back(resolve_input(e, changed_value, state));
    return out;
  }
  return input;
}

json::value Workspace::shown_input(const json::value& input, const json::value& changed_value,
                                   const json::object& state, const StateDef& effect_state,
                                   bool& touched) const {
  if (const auto* o = input.if_object()) {
    if (const auto* p = o->if_contains("$value"); p != nullptr && o->size() == 1) {
      if (!effect_state.readable()) {
        touched = true;
        return json::string(kWithheld);
      }
      return resolve_input(input, changed_value, state);
    }
    if (const auto* n = o->if_contains("$state"); n != nullptr && n->is_string()) {
      const StateDef* s = def_.find(n->get_string());
      if (s != nullptr && !s->readable()) {
        touched = true;
        return json::string(kWithheld);
      }
      return resolve_input(input, changed_value, state);
    }
    json::object out;
    for (const auto& kv : *o) {
      out[kv.key()] = shown_input(kv.value(), changed_value, state, effect_state, touched);
    }
    return out;
  }
  if (const auto* a = input.if_array()) {
    json::array out;
    for (const auto& e : *a) {
      out.push_back(shown_input(e, changed_value, state, effect_state, touched));
    }
    return out;
  }
  return input;
}

HistoryEntry Workspace::entry_for(const Change& change, std::string outcome) const {
  HistoryEntry entry;
  entry.at_ms = now_ms();
  entry.actor = change.actor;
  entry.kind = change.kind;
  entry.script = change.script;
  entry.outcome = std::move(outcome);
  entry.console = change.console.lines;
  entry.output = change.output;
  entry.clock_ms = change.inputs.clock_ms;
  entry.seed = change.inputs.seed;
  entry.reverts = change.reverts;
  entry.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - change.started)
                         .count();
  return entry;
}

asio::awaitable<Status> Workspace::record(HistoryEntry entry) {
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Status()> work = [store, name, entry]() mutable {
    return store->record(name, entry);
  };
  co_return co_await options_.blocking->run(work);
}

asio::awaitable<Status> Workspace::record_failure(Change& change, const Error& error) {
  if (change.dry_run) co_return Status();
  HistoryEntry entry = entry_for(change, "failed");
  entry.error = error_object(error);
  co_return co_await record(std::move(entry));
}

asio::awaitable<Result<json::object>> Workspace::execute(ExecuteRequest request) {
  auto guard = co_await changes_.lock();
  if (!guard || closed_) {
    co_return Error::make(ErrorCode::kInternalError, "the workspace is closed");
  }
  Change change;
  change.actor = request.actor;
  change.script = std::move(request.script);
  change.dry_run = request.dry_run;
  {
    std::lock_guard lock(mu_);
    change.from_version = version_;
    change.before = state_;
  }
  if (request.expected_version && *request.expected_version != change.from_version) {
    co_return Error::make(
        ErrorCode::kConflict,
        "workspace " + def_.name + " is at version " + std::to_string(change.from_version) +
            ", not " + std::to_string(*request.expected_version) + ": render it again and retry",
        json::object{{"expectedVersion", *request.expected_version},
                     {"version", change.from_version}});
  }
  if (change.script.size() > def_.limits.script_bytes) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "the script is " + std::to_string(change.script.size()) +
                              " bytes, over the limit of " +
                              std::to_string(def_.limits.script_bytes) + " (limits.scriptKb)",
                          json::object{{"field", "script"}, {"constraint", "maxLength"}});
  }
  change.inputs.clock_ms = def_.grants.time ? now_ms() : 0;
  if (def_.grants.random) {
    change.inputs.seed = static_cast<std::uint32_t>(std::stoul(random_hex(4), nullptr, 16));
  }

  auto console = std::make_shared<Console>();
  console->limit = def_.limits.console_bytes;
  jsworker::Job job;
  job.request = build_evaluation(def_, change.before, change.script, change.inputs);
  job.timeout = def_.limits.timeout;
  job.label = def_.name;
  job.on_log = [console](const jsworker::Log& log) { console->add(log.level, log.message); };
  auto ran = co_await options_.pool->run(std::move(job));
  change.console = *console;
  if (!ran.ok()) {
    Error error = std::move(ran).error();
    if (error.code == ErrorCode::kTimeout) {
      error.message = "the script ran past its time limit of " +
                      std::to_string(def_.limits.timeout.count()) +
                      " ms (limits.timeoutMs) and was stopped; nothing changed";
    } else if (json::string_member(error.data, "reason") == "memory-limit") {
      error.message = "the script ran out of memory (limits.memoryMb: " +
                      std::to_string(def_.limits.memory_bytes >> 20) +
                      " MB) and was stopped; nothing changed";
    }
    (void)co_await record_failure(change, error);
    co_return error;
  }
  auto result = read_result(def_, change.before, ran.value());
  if (!result.ok()) {
    (void)co_await record_failure(change, result.error());
    co_return result.error();
  }
  change.after = std::move(result->state);
  change.output = std::move(result->output);
  change.completion = std::move(result->completion);
  co_return co_await finish(std::move(guard), std::move(change));
}

Workspace::Change Workspace::revert_change(std::string actor, std::int64_t version,
                                           std::string_view what) const {
  Change change;
  change.kind = "revert";
  change.actor = std::move(actor);
  change.reverts = version;
  change.script = std::string(what) + std::to_string(version);
  std::lock_guard lock(mu_);
  change.from_version = version_;
  change.before = state_;
  return change;
}

asio::awaitable<Result<json::object>> Workspace::finish(AsyncMutex::Guard guard, Change change) {
  auto out = co_await apply(std::move(change));
  guard = AsyncMutex::Guard();  // sources that refresh after a commit make changes of their own
  co_await after_commit(out);
  co_return out;
}

asio::awaitable<Result<json::object>> Workspace::revert(std::int64_t version, std::string actor) {
  auto guard = co_await changes_.lock();
  if (!guard || closed_) {
    co_return Error::make(ErrorCode::kInternalError, "the workspace is closed");
  }
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<std::optional<HistoryEntry>>()> find = [store, name, version] {
    return store->change(name, version);
  };
  auto found = co_await options_.blocking->run(find);
  if (!found.ok()) co_return found.error();
  if (!found.value()) {
    co_return Error::make(
        ErrorCode::kInvalidParams,
        "workspace " + def_.name + " has no change that made version " + std::to_string(version),
        json::object{{"field", "version"}, {"constraint", "exists"}});
  }
  const HistoryEntry& entry = *found.value();
  if (entry.kind == "source") {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "version " + std::to_string(version) +
                              " came from a source; it is not the model's to revert",
                          json::object{{"field", "version"}, {"constraint", "kind"}});
  }
  Change change = revert_change(std::move(actor), version, "// revert of version ");
  json::value doc = change.before;
  if (auto st = json::apply_patch(doc, entry.inverse); !st.ok()) {
    co_return Error::make(ErrorCode::kConflict,
                          "version " + std::to_string(version) +
                              " cannot be reverted: later changes touched the same values (" +
                              st.error().message + ")",
                          json::object{{"version", change.from_version}, {"reverts", version}});
  }
  change.after = std::move(doc.get_object());
  co_return co_await finish(std::move(guard), std::move(change));
}

asio::awaitable<Result<json::object>> Workspace::revert_to(std::int64_t version,
                                                           std::string actor) {
  auto guard = co_await changes_.lock();
  if (!guard || closed_) {
    co_return Error::make(ErrorCode::kInternalError, "the workspace is closed");
  }
  Change change = revert_change(std::move(actor), version, "// revert to version ");
  if (version < 0 || version > change.from_version) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "workspace " + def_.name + " is at version " +
                              std::to_string(change.from_version) +
                              ": toVersion must be from 0 to it",
                          json::object{{"field", "toVersion"}, {"constraint", "range"}});
  }
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<std::vector<HistoryEntry>>()> read = [store, name] {
    return store->history(name, 0, std::numeric_limits<std::int32_t>::max());
  };
  auto entries = co_await options_.blocking->run(read);
  if (!entries.ok()) co_return entries.error();
  // The inverses of the model's changes after `version`, newest first. Source updates are left
  // alone: a source's value is what its service says now.
  json::value doc = change.before;
  auto& all = entries.value();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (!it->version || *it->version <= version || it->kind == "source") continue;
    if (auto st = json::apply_patch(doc, it->inverse); !st.ok()) {
      co_return Error::make(ErrorCode::kConflict,
                            "version " + std::to_string(version) +
                                " cannot be restored: the change that made version " +
                                std::to_string(*it->version) + " no longer undoes cleanly (" +
                                st.error().message + ")",
                            json::object{{"version", change.from_version}, {"toVersion", version}});
    }
  }
  change.after = std::move(doc.get_object());
  co_return co_await finish(std::move(guard), std::move(change));
}

namespace {

/// A state's name as others may see it: a private state's name is not shown either (a revert
/// can change one).
std::string shown_state_name(const StateDef& s) {
  return s.is_public ? s.name : std::string(kWithheld);
}

/// What answers, tool results and agent actions show of one side effect before it runs:
/// `shown` is its input as shown_input() gave it.
json::object effect_report(const Definition& def, const StateDef& s, const SideEffect& effect,
                           json::value shown) {
  json::object report{{"state", shown_state_name(s)},
                      {"service", effect.call.service},
                      {"endpoint", effect.call.endpoint},
                      {"input", std::move(shown)},
                      {"reversible", effect.compensate.has_value()}};
  if (effect.assign) {
    const StateDef* target = def.find(*effect.assign);
    report["assign"] = target != nullptr && target->is_public ? json::string(*effect.assign)
                                                              : json::string(kWithheld);
  }
  return report;
}

/// The error of a change whose side effect `effect` (of state `s`) failed with `failure`, after
/// the effects before it were compensated as `compensated` says.
Error side_effect_failed(const StateDef& s, const SideEffect& effect, const Error& failure,
                         bool confidential, json::array compensated) {
  const std::string state_shown = shown_state_name(s);
  const std::string cause = confidential ? std::string(
                                               "its details are withheld (it took "
                                               "a value the model may not read)")
                                         : failure.message;
  return Error::make(
      ErrorCode::kHandlerError,
      strcat("the side effect of ", state_shown, " (", effect.call.service, "/",
             effect.call.endpoint, ") failed: ", cause, "; nothing changed"),
      json::object{{"state", state_shown},
                   {"effect", json::object{{"service", effect.call.service},
                                           {"endpoint", effect.call.endpoint}}},
                   {"cause", confidential ? withheld_error(failure) : error_object(failure)},
                   {"compensated", std::move(compensated)}});
}

}  // namespace

/// A side effect that ran, kept for its compensation should a later one fail.
struct Workspace::DoneEffect {
  const StateDef* state;
  const SideEffect* effect;
  json::value input;
  json::value result;
  bool confidential;  ///< the call took, or its result became, a value the model may not read
};

/// What a change makes differ: a patch over {state: value} and its inverse.
struct Workspace::StateDiff {
  json::array patch;
  json::array inverse;
  json::array public_names;                   ///< changed states the model may know of
  std::map<std::string, json::value> values;  ///< every changed state's new value
};

asio::awaitable<Result<json::object>> Workspace::apply(Change change) {
  // What changed, in declaration order.
  std::vector<const StateDef*> changed;
  for (const auto& s : def_.states) {
    const auto* a = change.before.if_contains(s.name);
    const auto* b = change.after.if_contains(s.name);
    if ((a == nullptr) != (b == nullptr) || (a != nullptr && *a != *b)) changed.push_back(&s);
  }
  for (const StateDef* s : changed) {
    if (auto problem = check_state(*s, change.after.at(s->name), def_.limits.state_bytes)) {
      (void)co_await record_failure(change, *problem);
      co_return *problem;
    }
  }
  auto effects = co_await run_effects(change, changed);
  if (!effects.ok()) co_return effects.error();
  const StateDiff diff = diff_states(change);
  json::object out = answer(change, diff, effects.value());
  if (change.dry_run || diff.values.empty()) {
    out["version"] = change.from_version;
    out["committed"] = false;
    if (!change.dry_run) {
      (void)co_await record(entry_for(change, "no_change"));
    }
    co_return out;
  }
  auto version = co_await commit_change(change, diff, effects.value());
  if (!version.ok()) co_return version.error();
  out["version"] = version.value();
  out["committed"] = true;
  ChangeEvent event{def_.name, version.value(), {}, change.actor, change.kind};
  for (const auto& [n, v] : diff.values) {
    const StateDef* s = def_.find(n);
    if (s != nullptr && s->is_public) event.changed.push_back(n);
  }
  notify(event);
  co_return out;
}

asio::awaitable<Result<json::array>> Workspace::run_effects(
    Change& change, const std::vector<const StateDef*>& changed) {
  json::array effects;
  std::vector<DoneEffect> done;
  const std::string actor = "workspace:" + def_.name;
  for (const StateDef* s : changed) {
    for (const auto& effect : s->effects) {
      json::value input = resolve_input(effect.call.input, change.after.at(s->name), change.after);
      // What answers, tool results and agent actions show: no value of a private or
      // write-only state, in the input or in a result that could echo it or become one.
      bool confidential = false;
      json::value shown =
          shown_input(effect.call.input, change.after.at(s->name), change.after, *s, confidential);
      if (effect.assign) {
        const StateDef* target = def_.find(*effect.assign);
        confidential |= target == nullptr || !target->readable();
      }
      json::object report = effect_report(def_, *s, effect, std::move(shown));
      if (change.dry_run) {
        report["status"] = "would run";
        effects.push_back(std::move(report));
        continue;
      }
      std::string service = effect.call.service;
      std::string endpoint = effect.call.endpoint;
      auto result = co_await options_.services->call(service, endpoint, input, actor, confidential);
      std::optional<Error> failure;
      if (!result.ok()) {
        failure = result.error();
      } else if (effect.assign) {
        const StateDef* target = def_.find(*effect.assign);
        if (auto problem = check_state(*target, result.value(), def_.limits.state_bytes)) {
          failure = *problem;
        } else {
          change.after[*effect.assign] = result.value();
        }
      }
      if (failure) {
        report["status"] = "failed";
        report["error"] = confidential ? withheld_error(*failure) : error_object(*failure);
        effects.push_back(std::move(report));
        json::array compensated = co_await compensate(done, change.after, actor);
        Error error =
            side_effect_failed(*s, effect, *failure, confidential, std::move(compensated));
        HistoryEntry entry = entry_for(change, "rolled_back");
        entry.error = error_object(error);
        entry.effects = effects;
        (void)co_await record(std::move(entry));
        co_return error;
      }
      report["status"] = "ok";
      if (confidential) {
        report["result"] = json::string(kWithheld);
      } else {
        report["result"] = result.value();
      }
      effects.push_back(std::move(report));
      done.push_back({s, &effect, std::move(input), result.value(), confidential});
    }
  }
  co_return effects;
}

asio::awaitable<json::array> Workspace::compensate(const std::vector<DoneEffect>& done,
                                                   const json::object& state,
                                                   const std::string& actor) {
  json::array compensated;
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    const auto& comp = it->effect->compensate;
    json::object c{{"service", it->effect->call.service}, {"endpoint", it->effect->call.endpoint}};
    if (!comp) {
      c["status"] = "irreversible";
      compensated.push_back(std::move(c));
      continue;
    }
    json::object comp_state = state;
    comp_state["$result"] = it->result;
    json::value comp_input = resolve_input(comp->input, it->input, comp_state);
    // A compensation of a confidential call, or one that takes a hidden state, is too.
    bool comp_confidential = it->confidential;
    (void)shown_input(comp->input, it->input, comp_state, *it->state, comp_confidential);
    std::string comp_service = comp->service;
    std::string comp_endpoint = comp->endpoint;
    auto undone = co_await options_.services->call(comp_service, comp_endpoint, comp_input, actor,
                                                   comp_confidential);
    c["compensation"] = strcat(comp_service, "/", comp_endpoint);
    c["status"] = undone.ok() ? "compensated" : "compensation failed";
    if (!undone.ok()) {
      c["error"] =
          comp_confidential ? withheld_error(undone.error()) : error_object(undone.error());
    }
    compensated.push_back(std::move(c));
  }
  co_return compensated;
}

Workspace::StateDiff Workspace::diff_states(const Change& change) const {
  // Made of the states that differ now (assigned ones included): the others are neither copied
  // nor compared again.
  StateDiff diff;
  for (const auto& s : def_.states) {
    const auto* a = change.before.if_contains(s.name);
    const auto* b = change.after.if_contains(s.name);
    if (b == nullptr || (a != nullptr && *a == *b)) continue;
    if (s.is_public) diff.public_names.push_back(json::string(s.name));
    diff.values.emplace(s.name, *b);
    const std::string base = "/" + json::escape_pointer_token(s.name);
    if (a == nullptr) {
      diff.patch.push_back(json::object{{"op", "add"}, {"path", base}, {"value", *b}});
      diff.inverse.push_back(json::object{{"op", "remove"}, {"path", base}});
      continue;
    }
    for (auto& op : json::diff(*a, *b, base)) diff.patch.push_back(std::move(op));
    for (auto& op : json::diff(*b, *a, base)) diff.inverse.push_back(std::move(op));
  }
  return diff;
}

json::object Workspace::answer(const Change& change, const StateDiff& diff,
                               const json::array& effects) const {
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - change.started)
                           .count();
  json::object out;
  out["ok"] = true;
  out["dryRun"] = change.dry_run;
  out["changed"] = diff.public_names;
  out["patch"] = visible_patch(def_, diff.patch);
  out["inverse"] = visible_patch(def_, diff.inverse);
  out["effects"] = effects;
  out["console"] = change.console.lines;
  out["output"] = change.output;
  if (change.completion) out["completion"] = json::object{{"result", *change.completion}};
  out["elapsedMs"] = elapsed;
  out["stats"] = json::object{{"elapsedMs", elapsed},
                              {"consoleLines", change.console.lines.size()},
                              {"effects", effects.size()}};
  if (change.reverts) out["reverts"] = *change.reverts;
  return out;
}

asio::awaitable<Result<std::int64_t>> Workspace::commit_change(const Change& change,
                                                               const StateDiff& diff,
                                                               const json::array& effects) {
  HistoryEntry entry = entry_for(change, "committed");
  entry.patch = diff.patch;
  entry.inverse = diff.inverse;
  entry.effects = effects;
  Store* store = options_.store;
  const std::string name = def_.name;
  const std::int64_t from = change.from_version;
  std::function<Result<HistoryEntry>()> commit = [store, name, from, changed_values = diff.values,
                                                  entry]() mutable -> Result<HistoryEntry> {
    HEARTH_RETURN_IF_ERROR(store->commit(name, from, changed_values, entry));
    return entry;
  };
  auto committed = co_await options_.blocking->run(commit);
  if (!committed.ok()) {
    if (committed.error().code == ErrorCode::kConflict) {
      // Another process changed the workspace: take its state, so the next try starts there.
      std::function<Result<Snapshot>()> load = [store, name] { return store->load(name); };
      auto snapshot = co_await options_.blocking->run(load);
      if (snapshot.ok() && snapshot->exists) {
        std::lock_guard lock(mu_);
        version_ = snapshot->version;
        for (const auto& kv : snapshot->state) state_[kv.key()] = kv.value();
      }
    }
    co_return committed.error();
  }
  const std::int64_t version = *committed->version;
  {
    std::lock_guard lock(mu_);
    version_ = version;
    for (const auto& [n, v] : diff.values) state_[n] = v;
  }
  co_return version;
}

bool Workspace::wants_refresh(std::int64_t version) {
  if (version > 0 && this->version() >= version) return false;
  return !refresh_waiting_.exchange(true);
}

asio::awaitable<Status> Workspace::refresh(std::string actor, std::string kind) {
  if (closed_.load()) co_return Status{};
  // One at a time with this daemon's own changes, so that a change never starts from a state
  // half taken.
  auto guard = co_await changes_.lock();
  // From here a notice needs a refresh of its own: this one may read before its change.
  refresh_waiting_ = false;
  if (!guard) co_return Status{};
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<Snapshot>()> load = [store, name] { return store->load(name); };
  auto snapshot = co_await options_.blocking->run(load);
  if (!snapshot.ok()) co_return snapshot.error();
  if (!snapshot->exists) co_return Status{};
  ChangeEvent event;
  {
    std::lock_guard lock(mu_);
    if (snapshot->version <= version_) co_return Status{};
    version_ = snapshot->version;
    for (const auto& kv : snapshot->state) {
      if (def_.find(kv.key()) == nullptr) continue;
      auto it = state_.find(kv.key());
      if (it != state_.end() && it->value() == kv.value()) continue;
      state_[kv.key()] = kv.value();
      event.changed.emplace_back(kv.key());
    }
  }
  event.workspace = name;
  event.version = snapshot->version;
  event.actor = std::move(actor);
  event.kind = std::move(kind);
  event.remote = true;
  notify(event);
  co_return Status{};
}

asio::awaitable<void> Workspace::after_commit(const Result<json::object>& result) {
  if (!result.ok()) co_return;
  const auto* committed = result->if_contains("committed");
  if (committed == nullptr || !committed->is_bool() || !committed->get_bool()) co_return;
  (void)co_await refresh_sources(false);
}

asio::awaitable<Result<std::vector<HistoryEntry>>> Workspace::history(std::int64_t after_seq,
                                                                      std::size_t limit) {
  Store* store = options_.store;
  const std::string name = def_.name;
  std::function<Result<std::vector<HistoryEntry>>()> read = [store, name, after_seq, limit] {
    return store->history(name, after_seq, limit);
  };
  co_return co_await options_.blocking->run(read);
}

}  // namespace hearth::workspace
