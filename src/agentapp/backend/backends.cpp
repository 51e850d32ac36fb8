#include "agentapp/backend/backends.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "agentapp/store/services.hpp"
#include "common/clock.hpp"
#include "common/on_strand.hpp"
#include "confine/confine.hpp"
#include "egress/network_policy.hpp"
#include "handlers/script/program.hpp"
#include "jsworker/pool.hpp"
#include "mcp/message.hpp"
#include "mcp/stdio_transport.hpp"
#include "permissions/permissions.hpp"

namespace hearth::agentapp {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

/// The version of the line protocol between hearth and a backend (docs/agent-apps.md).
constexpr int kProtocolVersion = 1;
/// At most this many tools of one backend, read from at most this many tools/list pages.
constexpr std::size_t kMaxTools = 128;
constexpr int kMaxToolPages = 16;

json::object message(std::string_view method) {
  return json::object{{"jsonrpc", "2.0"}, {"method", method}};
}

std::int64_t ms(Clock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

/// What one poll of the store found: the backends that should run, and the JS units that may
/// be called.
struct Wanted {
  InstalledApp app;
  BackendService service;
};
struct WantedJs {
  InstalledApp app;
  JsUnit unit;
};
struct Found {
  std::vector<Wanted> backends;
  std::vector<WantedJs> js;
};

json::object answer_of(const Result<json::value>& r) {
  if (r.ok()) return json::object{{"result", r.value()}};
  return json::object{{"error", to_json(r.error())}};
}

/// An app disabled by the integrity check (AppStore::verify_installed), on one log line: which
/// app, when, and each file that changed.
std::string integrity_line(const Error& error, std::string_view when) {
  const auto* data = error.data.if_object();
  const auto text = [data](std::string_view key) {
    const auto* v = data != nullptr ? data->if_contains(key) : nullptr;
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  std::string line = "app '" + text("app") + "' " + text("version") + " disabled at " +
                     std::string(when) + ": its installed files changed since install: ";
  const auto* problems = data != nullptr ? data->if_contains("problems") : nullptr;
  if (problems == nullptr || !problems->is_array()) return line + error.message;
  bool first = true;
  for (const auto& p : problems->get_array()) {
    if (!first) line += "; ";
    first = false;
    line += p.is_string() ? std::string(p.get_string()) : json::serialize(p);
  }
  return line;
}

/// The evidence entry of such an app.
json::object integrity_detail(const Error& error, std::string_view when) {
  json::object detail{{"when", when}};
  if (const auto* data = error.data.if_object()) {
    for (const auto* key : {"version", "dir", "problems"}) {
      if (const auto* v = data->if_contains(key)) detail[key] = *v;
    }
  }
  return detail;
}

}  // namespace

struct Backends::Entry {
  enum class Phase { kStopped, kStarting, kRunning, kRestarting };

  struct Pending {
    explicit Pending(const asio::any_io_executor& executor) : timer(executor) {}
    std::optional<json::object> response;
    std::optional<Error> failure;
    asio::steady_timer timer;
  };

  explicit Entry(const asio::any_io_executor& executor) : changed(executor) {}

  InstalledApp app;
  BackendService spec;
  std::string label() const { return "backend '" + spec.key + "' of app '" + app.name + "'"; }

  Phase phase = Phase::kStopped;
  std::unique_ptr<mcp::StdioTransport> transport;
  std::uint64_t run = 0;  ///< +1 at each start: messages of an older run are dropped
  std::map<std::int64_t, std::shared_ptr<Pending>> pending;
  std::int64_t next_id = 0;
  std::size_t inflight = 0;  ///< the backend's own requests being served
  int pid = -1;
  int starts = 0;
  int failures = 0;  ///< starts in a row that did not last stable_after
  /// Starts in a row that did not come up (it could not start, or ended or was given up before
  /// answering `initialize`): while it is above 0 the backend is failing, not restarting.
  int failed_starts = 0;
  Clock::time_point since = Clock::now();
  Clock::time_point next_start = Clock::now();
  std::string last_exit;
  std::string reason;       ///< why it is restarting or failing
  std::string stderr_tail;  ///< the end of the stderr of the run that failed
  bool removed = false;
  bool reported = false;  ///< the store holds a report of it failing (AppStore::report_backend)

  // The log of its failures: the first of a series, then a line only when the reason changes
  // or `log_summary_every` passed (with the count since), never one a restart.
  std::string logged;
  Clock::time_point logged_at{};
  int unlogged = 0;

  // Its tools (`tools/list`, asked after `initialize`; asked again after
  // notifications/tools/list_changed).
  json::array tools;  ///< {name, description, inputSchema}
  bool tools_listed = false;
  std::string tools_problem;   ///< why tools/list gave none (not -32601)
  asio::steady_timer changed;  ///< cancelled at each change of phase, for waiting calls
};

/// A worker or workflow module of an enabled app, run in a JS worker pool of its own (made at
/// its first call).
struct Backends::JsEntry {
  InstalledApp app;
  JsUnit unit;
  std::shared_ptr<jsworker::Pool> pool;
};

struct Backends::State : std::enable_shared_from_this<Backends::State> {
  State(const asio::any_io_executor& executor, AppStore& s, Bridge& b, BlockingExecutor& bl,
        BackendOptions o)
      : strand(asio::make_strand(executor)),
        store(s),
        bridge(b),
        blocking(bl),
        options(std::move(o)),
        wake(strand) {}

  asio::strand<asio::any_io_executor> strand;
  AppStore& store;
  Bridge& bridge;
  BlockingExecutor& blocking;
  BackendOptions options;
  asio::steady_timer wake;  ///< the poll loop's sleep

  // Strand state.
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Entry>> entries;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<JsEntry>> js_entries;
  /// What an installed package runs.
  struct Plans {
    std::vector<BackendService> backends;
    std::vector<JsUnit> js;
  };
  std::map<fs::path, std::shared_ptr<const Plans>> plans;  ///< by package folder
  /// Whether the first poll checked the files of every enabled app (the daemon's start).
  bool checked_at_start = false;
  std::atomic<bool> stopped{false};

  /// The reports of failing backends waiting to be written to the store (report()).
  struct PendingReport {
    fs::path dir;
    std::optional<json::object> report;
  };
  std::mutex reports_mutex;
  std::map<std::pair<std::string, std::string>, PendingReport> pending_reports;
  std::mutex flush_mutex;  ///< one flush at a time, so a later report is never overwritten

  // --- evidence -------------------------------------------------------------------------------

  void record(const Entry& e, std::string_view kind, json::object detail) {
    record(e.app.name, e.spec.key, kind, std::move(detail));
  }
  void record(const std::string& app_name, const std::string& service, std::string_view kind,
              json::object detail) {
    detail["service"] = service;
    auto self = shared_from_this();
    blocking.post([self, app = app_name, kind = std::string(kind), detail = std::move(detail)] {
      auto recorded = self->bridge.record(app, kind, detail);
      if (!recorded.ok()) {
        spdlog::warn("app '{}': {} not recorded: {}", app, kind, recorded.error().message);
      }
    });
  }

  // --- the store ------------------------------------------------------------------------------

  /// On a blocking thread: an app disabled by the integrity check, logged and in its evidence.
  void integrity_failed(const Error& error, std::string_view when) {
    spdlog::error("{}", integrity_line(error, when));
    const auto* data = error.data.if_object();
    const auto* app = data != nullptr ? data->if_contains("app") : nullptr;
    if (app == nullptr || !app->is_string()) return;
    auto recorded = bridge.record(std::string(app->get_string()), "integrity.failed",
                                  integrity_detail(error, when));
    if (!recorded.ok()) {
      spdlog::warn("app '{}': integrity.failed not recorded: {}", app->get_string(),
                   recorded.error().message);
    }
  }

  /// On a blocking thread: the backends of the enabled apps. An installed package folder only
  /// changes behind hearth's back (which the integrity check catches before anything starts),
  /// so what it runs is planned once per folder (`cache`), not at every poll. With
  /// `check_all` (the first poll, as the daemon starts) the files of every enabled app are
  /// checked first, and an app whose files changed is disabled.
  Result<Found> wanted(std::map<fs::path, std::shared_ptr<const Plans>>& cache, bool check_all) {
    if (check_all) {
      auto failed = store.verify_enabled("daemon start");
      if (!failed.ok()) {
        spdlog::error("app backends: the installed apps cannot be checked: {}",
                      failed.error().message);
        return std::move(failed).error();
      }
      for (const auto& error : failed.value()) integrity_failed(error, "daemon start");
      // What an earlier daemon reported of failing backends is stale now.
      if (auto cleared = store.clear_backend_reports(); !cleared.ok()) {
        spdlog::warn("app backends: old reports not cleared: {}", cleared.error().message);
      }
    }
    HEARTH_ASSIGN_OR_RETURN(auto apps, store.list());
    Found out;
    std::map<fs::path, std::shared_ptr<const Plans>> seen;
    for (auto& app : apps) {
      if (!app.enabled) continue;
      auto it = cache.find(app.dir);
      std::shared_ptr<const Plans> plans;
      if (it != cache.end()) {
        plans = it->second;
      } else {
        auto read = read_manifest(app.dir);
        if (!read.ok()) {
          spdlog::warn("app '{}': its manifest cannot be read: {}", app.name, read.error().message);
          continue;
        }
        const auto& fm = read.value().front_matter;
        plans = std::make_shared<const Plans>(
            Plans{plan_backends(fm, app.dir).run, plan_js_units(fm, app.dir).run});
      }
      seen[app.dir] = plans;
      for (const auto& service : plans->backends) out.backends.push_back({app, service});
      for (const auto& unit : plans->js) out.js.push_back({app, unit});
    }
    cache = std::move(seen);
    return out;
  }

  /// On the strand: brings the running set in line with the store.
  asio::awaitable<void> reconcile() {
    auto self = shared_from_this();
    auto cache = plans;
    // Once (a call's reconcile that overlaps the first poll does not check again: each start
    // checks its own app's files anyway).
    const bool check_all = !std::exchange(checked_at_start, true);
    std::function<Result<Found>()> work = [self, &cache, check_all] {
      return self->wanted(cache, check_all);
    };
    auto found = co_await blocking.run(work);
    if (stopped) co_return;
    if (!found.ok()) {
      if (check_all) checked_at_start = false;
      spdlog::warn("app backends: the app store cannot be read: {}", found.error().message);
      co_return;
    }
    plans = std::move(cache);
    std::map<std::pair<std::string, std::string>, WantedJs*> want_js;
    for (auto& w : found.value().js) want_js[{w.app.name, w.unit.key}] = &w;
    for (auto it = js_entries.begin(); it != js_entries.end();) {
      auto w = want_js.find(it->first);
      if (w == want_js.end() || w->second->app.dir != it->second->app.dir ||
          w->second->unit.module != it->second->unit.module) {
        if (it->second->pool) it->second->pool->stop();
        it = js_entries.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [key, w] : want_js) {
      if (js_entries.contains(key)) continue;
      js_entries.emplace(
          key, std::make_shared<JsEntry>(JsEntry{std::move(w->app), std::move(w->unit), nullptr}));
    }
    std::map<std::pair<std::string, std::string>, Wanted*> want;
    for (auto& w : found.value().backends) want[{w.app.name, w.service.key}] = &w;
    for (auto it = entries.begin(); it != entries.end();) {
      auto w = want.find(it->first);
      const bool same = w != want.end() && w->second->app.dir == it->second->app.dir &&
                        w->second->service.argv == it->second->spec.argv;
      if (!same) {
        stop_entry(*it->second, w == want.end() ? "the app was disabled or uninstalled"
                                                : "the app's package changed");
        it = entries.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [key, w] : want) {
      if (entries.contains(key)) continue;
      auto entry = std::make_shared<Entry>(strand);
      entry->app = std::move(w->app);
      entry->spec = std::move(w->service);
      entries.emplace(key, std::move(entry));
    }
    const auto now = Clock::now();
    for (auto& [_, entry] : entries) {
      if ((entry->phase == Entry::Phase::kStopped || entry->phase == Entry::Phase::kRestarting) &&
          now >= entry->next_start) {
        asio::co_spawn(strand, launch(entry), asio::detached);
      }
    }
  }

  asio::awaitable<void> poll_loop() {
    auto self = shared_from_this();
    while (!stopped) {
      co_await reconcile();
      if (stopped) break;
      auto next = Clock::now() + options.poll;
      for (const auto& [_, e] : entries) {
        if (e->phase == Entry::Phase::kRestarting) next = std::min(next, e->next_start);
      }
      wake.expires_at(next);
      co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }

  // --- one backend ----------------------------------------------------------------------------

  void set_phase(Entry& e, Entry::Phase phase) {
    e.phase = phase;
    e.since = Clock::now();
    e.changed.cancel();
  }

  void stop_entry(Entry& e, std::string_view why) {
    e.removed = true;
    if (e.reported) report(e, std::nullopt);
    if (e.transport) {
      spdlog::info("{} stopped: {}", e.label(), why);
      record(e, "backend.stopped", json::object{{"reason", why}});
      close(e,
            Error::make(ErrorCode::kHandlerError, e.label() + " was stopped: " + std::string(why)));
    }
    set_phase(e, Entry::Phase::kStopped);
  }

  /// Closes the run's transport and fails what waits on it.
  void close(Entry& e, const Error& reason) {
    ++e.run;
    if (e.transport) {
      e.transport->close();
      e.transport.reset();
    }
    e.pid = -1;
    for (auto& [_, p] : e.pending) {
      p->failure = reason;
      p->timer.cancel();
    }
    e.pending.clear();
  }

  /// The run ended or did not start: try again after the backoff. `tail`: the end of its
  /// stderr when the reason does not carry it (else what the transport kept is taken).
  void failed(Entry& e, const std::string& why, std::string tail = {}) {
    const bool came_up = e.phase == Entry::Phase::kRunning;
    const bool lasted = came_up && Clock::now() - e.since >= options.stable_after;
    if (tail.empty() && e.transport) tail = e.transport->stderr_tail();
    close(e, Error::make(ErrorCode::kHandlerError, e.label() + " stopped: " + why));
    if (e.removed || stopped) return;
    e.failures = lasted ? 1 : e.failures + 1;
    e.failed_starts = came_up ? 0 : e.failed_starts + 1;
    auto delay = options.backoff_initial;
    for (int i = 1; i < e.failures && delay < options.backoff_max; ++i) delay *= 2;
    delay = std::min(delay, options.backoff_max);
    e.reason = why;
    e.stderr_tail = std::move(tail);
    e.next_start = Clock::now() + delay;
    set_phase(e, Entry::Phase::kRestarting);
    log_failure(e, delay);
    if (e.failed_starts > 0) {
      json::object r{
          {"state", "failing"},
          {"required", e.spec.required},
          {"version", e.app.version},
          {"reason", e.reason},
          {"failures", e.failed_starts},
          {"stderrTail", e.stderr_tail},
          {"nextStartAt",
           utc_timestamp(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(delay))}};
      report(e, std::move(r));
    }
    wake.cancel();  // the poll loop sleeps until the earliest restart
  }

  /// A failure in the log and the app's evidence: the first of a series, then only a
  /// different reason, or a summary once `log_summary_every` passed - a backend that never
  /// comes up is tried again every backoff_max, and each try is not news.
  void log_failure(Entry& e, milliseconds delay) {
    const auto now = Clock::now();
    const std::string line =
        e.reason.starts_with(e.label()) ? e.reason : e.label() + ": " + e.reason;
    // Compared without the end of its stderr, which may differ at each try (a time stamp).
    const std::string kind = e.reason.substr(0, e.reason.find("; its stderr ends with"));
    const bool first = e.failures == 1 || e.logged.empty();
    if (first || kind != e.logged) {
      spdlog::warn("{}; starting it again in {} ms", line, delay.count());
    } else if (now - e.logged_at >= options.log_summary_every) {
      spdlog::warn(
          "{} still fails: {} more time(s) in {} s, the same way ({}); starting it again "
          "in {} ms",
          e.label(), e.unlogged + 1, ms(now - e.logged_at) / 1000, e.reason, delay.count());
    } else {
      ++e.unlogged;
      return;
    }
    if (e.failed_starts > 0) {
      json::object detail{{"reason", e.reason}, {"failures", e.failed_starts}};
      if (!e.stderr_tail.empty()) detail["stderrTail"] = e.stderr_tail;
      record(e, "backend.failed", std::move(detail));
    }
    e.logged = kind;
    e.logged_at = now;
    e.unlogged = 0;
  }

  /// Keeps the store's report of a failing backend (`r`) or removes it (nullopt), for
  /// `hearth app show`. Written on a blocking thread; the latest one wins, whatever the order
  /// the threads run in.
  void report(Entry& e, std::optional<json::object> r) {
    e.reported = r.has_value();
    {
      std::lock_guard lock(reports_mutex);
      pending_reports[{e.app.name, e.spec.key}] = {e.app.dir, std::move(r)};
    }
    auto self = shared_from_this();
    blocking.post([self] { self->flush_reports(); });
  }

  /// On a blocking thread.
  void flush_reports() {
    std::lock_guard in_order(flush_mutex);
    std::map<std::pair<std::string, std::string>, PendingReport> taken;
    {
      std::lock_guard lock(reports_mutex);
      taken.swap(pending_reports);
    }
    for (auto& [key, pending] : taken) {
      const json::object* r = pending.report ? &*pending.report : nullptr;
      if (auto st = store.report_backend(key.first, key.second, pending.dir, r); !st.ok()) {
        spdlog::warn("app '{}': the state of backend '{}' not recorded: {}", key.first, key.second,
                     st.error().message);
      }
    }
  }

  /// The command and jail of a start, or why it cannot start.
  Result<confine::ConfinedStdio> prepare(const Entry& e) {
    if (!options.jail) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "hearth starts app backends only under the jail, and it has none");
    }
    const auto& spec = e.spec;
    const fs::path& dir = e.app.dir;
    auto program = proc::find_program(spec.argv.front(), handlers::kSystemPath, dir);
    if (!program) {
      return Error::make(ErrorCode::kHandlerError, "command not found: " + spec.argv.front());
    }
    if (auto refused = handlers::program_refusal(*program, dir)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "the program " + program->string() + " " + *refused);
    }
    proc::Command cmd;
    cmd.program = *program;
    cmd.argv = spec.argv;
    cmd.cwd = dir;
    confine::Environment vars{
        {"PATH", std::string(handlers::kSystemPath)},
        {"LANG", "C.UTF-8"},
        {"HOME", "/tmp"},
        {"TMPDIR", "/tmp"},
        {"PYTHONDONTWRITEBYTECODE", "1"},
        {"PYTHONUNBUFFERED", "1"},
        {"HEARTH_APP", e.app.name},
        {"HEARTH_APP_VERSION", e.app.version},
        {"HEARTH_APP_SERVICE", spec.key},
        {"HEARTH_APP_DIR", dir.string()},
    };
    cmd.env = confine::environment_entries(vars);

    permissions::Permissions permissions;
    if (spec.network == "remote-allowed") {
      auto policy = egress::NetworkPolicy::parse(spec.hosts);
      if (!policy.ok()) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "the app's network domains: " + policy.error().message);
      }
      permissions.network_access = std::move(policy).value();
    } else {
      permissions.network_access = egress::NetworkPolicy(false);
    }
    permissions.max_memory = spec.memory_bytes;
    // The jail reads the arguments as the code it may read and run; the package folder among
    // them makes the whole package (and only it) readable, never writable.
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    args.push_back(dir.string());
    return confine::confined_stdio(options.jail.get(), permissions, dir, args, std::move(cmd),
                                   strand, "app " + e.app.name + " (" + e.label() + ")");
  }

  asio::awaitable<void> launch(std::shared_ptr<Entry> entry) {
    auto self = shared_from_this();
    Entry& e = *entry;
    if (stopped || e.removed || e.phase == Entry::Phase::kStarting ||
        e.phase == Entry::Phase::kRunning) {
      co_return;
    }
    set_phase(e, Entry::Phase::kStarting);
    // Only what was installed runs: the package's files are checked at every start and restart
    // (a file changed since the last start disables the app instead).
    const std::string when = e.starts == 0 ? "backend start" : "backend restart";
    std::function<Status()> verify = [self, app = e.app, when] {
      return self->store.verify_installed(app, when);
    };
    auto intact = co_await blocking.run(verify);
    if (e.removed || stopped) co_return;
    if (!intact.ok()) {
      if (integrity_error(intact.error())) {
        refuse_changed(entry, intact.error(), when);
      } else {
        failed(e, "its package cannot be checked: " + intact.error().message);
      }
      co_return;
    }
    // Readiness may have changed since the app was enabled (a secret removed).
    std::function<Result<json::object>()> check = [self, name = e.app.name] {
      return self->store.readiness(name);
    };
    auto ready = co_await blocking.run(check);
    if (e.removed || stopped) co_return;
    if (ready.ok()) {
      const auto* status = ready.value().if_contains("status");
      const std::string s = status != nullptr && status->is_string()
                                ? std::string(status->get_string())
                                : std::string();
      if (s != "ready" && s != "ready-degraded") {
        failed(e, "the app is " + s + " (see hearth app show " + e.app.name + ")");
        co_return;
      }
    }
    auto prepared = prepare(e);
    if (!prepared.ok()) {
      failed(e, prepared.error().message);
      co_return;
    }
    const std::uint64_t run = ++e.run;
    auto transport = std::make_unique<mcp::StdioTransport>(
        e.label(), std::move(prepared.value().launch), std::move(prepared.value().verdict),
        options.max_message);
    auto* stdio = transport.get();
    e.transport = std::move(transport);
    std::weak_ptr<State> weak = self;
    std::weak_ptr<Entry> weak_entry = entry;
    mcp::Transport::Handlers handlers;
    handlers.on_message = [weak, weak_entry, run](json::value m) {
      if (auto s = weak.lock()) {
        asio::post(s->strand, [s, weak_entry, run, m = std::move(m)]() mutable {
          auto en = weak_entry.lock();
          if (en && en->run == run) s->on_message(en, std::move(m));
        });
      }
    };
    handlers.on_closed = [weak, weak_entry, run](Error reason) {
      if (auto s = weak.lock()) {
        asio::post(s->strand, [s, weak_entry, run, reason = std::move(reason)] {
          auto en = weak_entry.lock();
          if (en && en->run == run) s->on_closed(*en, reason);
        });
      }
    };
    auto opened = stdio->open(std::move(handlers));
    if (!opened.ok()) {
      failed(e, "it did not start: " + opened.error().message);
      co_return;
    }
    ++e.starts;
    e.pid = stdio->pid();
    json::object params{
        {"protocol", "hearth.agentApp.backend"},
        {"version", kProtocolVersion},
        {"app", json::object{{"name", e.app.name},
                             {"version", e.app.version},
                             {"packageHash", e.app.package_hash}}},
        {"service", e.spec.key},
        {"capabilities", json::array(e.spec.capabilities.begin(), e.spec.capabilities.end())}};
    auto hello = co_await request(entry, "initialize", json::value(std::move(params)),
                                  options.start_timeout, true);
    if (e.run != run || e.removed || stopped) co_return;
    // A backend without an `initialize` of its own (-32601) is started all the same.
    if (!hello.ok() && !method_not_found(hello.error())) {
      failed(e, "it did not answer initialize: " + hello.error().message);
      co_return;
    }
    // Its tools, before anyone sees it running: a turn that finds it running finds them.
    co_await list_tools(entry, run);
    if (e.run != run || e.removed || stopped) co_return;
    e.reason.clear();
    e.stderr_tail.clear();
    set_phase(e, Entry::Phase::kRunning);
    if (e.failed_starts > 0) {
      spdlog::warn("{} is running again (pid {}) after {} failed start(s)", e.label(), e.pid,
                   e.failed_starts);
    } else {
      spdlog::info("{} started (pid {}, start {})", e.label(), e.pid, e.starts);
    }
    e.failed_starts = 0;
    e.logged.clear();
    e.unlogged = 0;
    if (e.reported) report(e, std::nullopt);
    record(e, "backend.started", json::object{{"start", e.starts}, {"pid", e.pid}});
  }

  static bool method_not_found(const Error& error) {
    const auto* data = error.data.if_object();
    const auto* code = data != nullptr ? data->if_contains("code") : nullptr;
    return code != nullptr && code->is_int64() &&
           code->get_int64() == static_cast<int>(ErrorCode::kMethodNotFound);
  }

  /// Asks the backend for its tools (`tools/list`, MCP's shape: {tools: [{name, description,
  /// inputSchema}], nextCursor?}), every page. A backend without tools/list (-32601) has
  /// none; one that fails otherwise has none either, and the reason is kept and logged once.
  asio::awaitable<void> list_tools(std::shared_ptr<Entry> entry, std::uint64_t run) {
    Entry& e = *entry;
    json::array tools;
    std::string problem;
    std::string cursor;
    for (int page = 0; page < kMaxToolPages; ++page) {
      json::object params;
      if (!cursor.empty()) params["cursor"] = cursor;
      auto listed = co_await request(entry, "tools/list", json::value(std::move(params)),
                                     options.start_timeout, true);
      if (e.run != run || e.removed || stopped) co_return;
      if (!listed.ok()) {
        if (!method_not_found(listed.error())) problem = listed.error().message;
        break;
      }
      const auto* list =
          listed.value().is_object() ? listed.value().get_object().if_contains("tools") : nullptr;
      if (list == nullptr || !list->is_array()) {
        problem = e.label() + " answered tools/list without a list of tools";
        break;
      }
      for (const auto& item : list->get_array()) {
        const auto* tool = item.if_object();
        const auto* name = tool != nullptr ? tool->if_contains("name") : nullptr;
        if (name == nullptr || !name->is_string() || name->get_string().empty()) continue;
        if (tools.size() >= kMaxTools) break;
        const auto* schema = tool->if_contains("inputSchema");
        tools.emplace_back(
            json::object{{"name", name->get_string()},
                         {"description", json::string_member(*tool, "description")},
                         {"inputSchema", schema != nullptr && schema->is_object()
                                             ? *schema
                                             : json::value(json::object{{"type", "object"}})}});
      }
      cursor = json::string_member(listed.value(), "nextCursor");
      if (cursor.empty() || tools.size() >= kMaxTools) break;
    }
    if (!problem.empty() && problem != e.tools_problem) {
      spdlog::warn("{} lists no tools: {}", e.label(), problem);
    }
    e.tools = std::move(tools);
    e.tools_problem = std::move(problem);
    e.tools_listed = true;
  }

  static bool integrity_error(const Error& error) {
    const auto* data = error.data.if_object();
    return error.code == ErrorCode::kPermissionDenied && data != nullptr &&
           data->contains("problems");
  }

  /// On the strand: the app's files changed since install (the store has disabled it). The
  /// backend is not started and leaves the running set; calls waiting for it get the reason.
  void refuse_changed(const std::shared_ptr<Entry>& entry, const Error& error,
                      std::string_view when) {
    Entry& e = *entry;
    const std::string line = integrity_line(error, when);
    spdlog::error("{}: {} not started", line, e.label());
    record(e, "integrity.failed", integrity_detail(error, when));
    e.reason = line;
    stop_entry(e, "its installed files changed since install");
    const auto key = std::make_pair(e.app.name, e.spec.key);
    if (auto it = entries.find(key); it != entries.end() && it->second == entry) entries.erase(it);
    wake.cancel();  // the next poll finds the app disabled
  }

  void on_closed(Entry& e, const Error& reason) {
    e.last_exit = reason.message;
    // A run that never came up is evidenced as a failed start (log_failure), not each time.
    if (e.phase == Entry::Phase::kRunning) {
      record(e, "backend.exited", json::object{{"reason", reason.message}});
    }
    const auto* data = reason.data.if_object();
    const auto* tail = data != nullptr ? data->if_contains("stderr") : nullptr;
    failed(e, reason.message,
           tail != nullptr && tail->is_string() ? std::string(tail->get_string()) : "");
  }

  // --- messages -------------------------------------------------------------------------------

  void send(Entry& e, json::object m) {
    if (e.transport) e.transport->send(json::value(std::move(m)));
  }

  void on_message(const std::shared_ptr<Entry>& entry, json::value m) {
    Entry& e = *entry;
    for (auto& in : mcp::classify(std::move(m))) {
      switch (in.kind) {
        case mcp::Incoming::Kind::kResponse: {
          auto it = e.pending.find(in.id);
          if (it == e.pending.end()) break;  // late: given up after its timeout
          it->second->response = std::move(in.message);
          it->second->timer.cancel();
          e.pending.erase(it);
          break;
        }
        case mcp::Incoming::Kind::kRequest: {
          json::value id = in.message.at("id");
          if (e.inflight >= options.max_inflight) {
            json::object reply{{"jsonrpc", "2.0"}, {"id", id}};
            reply["error"] = to_json(Error::make(
                ErrorCode::kHandlerError,
                "too many requests at once (" + std::to_string(options.max_inflight) + ")"));
            send(e, std::move(reply));
            break;
          }
          ++e.inflight;
          const auto* params = in.message.if_contains("params");
          asio::co_spawn(strand,
                         serve(entry, e.run, std::move(id), std::move(in.method),
                               params != nullptr ? *params : json::value(nullptr)),
                         asio::detached);
          break;
        }
        case mcp::Incoming::Kind::kNotification:
          spdlog::debug("{} sent the notification {}", e.label(), in.method);
          // MCP's: its tools changed; they are asked for again when next needed.
          if (in.method == "notifications/tools/list_changed") e.tools_listed = false;
          break;
      }
    }
  }

  /// A request of the backend: the capability bridge, as its own app.
  asio::awaitable<void> serve(std::shared_ptr<Entry> entry, std::uint64_t run, json::value id,
                              std::string method, json::value params) {
    auto self = shared_from_this();
    auto answer = co_await host_call(*entry, method, params);
    --entry->inflight;
    if (entry->run != run) co_return;
    json::object reply{{"jsonrpc", "2.0"}, {"id", std::move(id)}};
    if (answer.ok()) {
      reply["result"] = std::move(answer).value();
    } else {
      reply["error"] = to_json(answer.error());
    }
    send(*entry, std::move(reply));
  }

  asio::awaitable<Result<json::value>> host_call(const Entry& e, const std::string& method,
                                                 const json::value& params) {
    // Named: GCC 12 may destroy a temporary argument of a co_awaited coroutine twice.
    std::string app = e.app.name;
    std::string key = e.spec.key;
    std::string caller = "backend:" + e.spec.key;
    std::string name = method;
    json::value args = params;
    co_return co_await host_call(std::move(app), std::move(key), std::move(caller), std::move(name),
                                 std::move(args));
  }

  /// A call of the app's own code (a backend's request, a JS worker's ctx.invoke), as the app:
  /// `caller` names it in the evidence.
  asio::awaitable<Result<json::value>> host_call(std::string app_name, std::string key,
                                                 std::string caller, std::string method,
                                                 json::value params) {
    if (method != "capability/invoke" && method != "capability/list") {
      co_return Error::make(
          ErrorCode::kMethodNotFound,
          "an app's code may call capability/invoke and capability/list, not " + method);
    }
    if (!params.is_object() && !params.is_null()) {
      co_return Error::make(ErrorCode::kInvalidParams, "params must be an object");
    }
    static const json::object kNone;
    const json::object& p = params.is_object() ? params.get_object() : kNone;
    const auto text = [&p](std::string_view member) -> std::optional<std::string> {
      const auto* v = p.if_contains(member);
      if (v == nullptr || !v->is_string()) return std::nullopt;
      return std::string(v->get_string());
    };
    if (auto app = text("appId"); app && *app != app_name) {
      json::object data{{"stage", "identity"},
                        {"appId", *app},
                        {"reason", "an app's code acts only for its own app"}};
      record(app_name, key, "capability.denied",
             json::object{{"stage", "identity"}, {"appId", *app}, {"method", method}});
      co_return Error::make(
          ErrorCode::kPermissionDenied,
          caller + " of app '" + app_name + "' may not act for app '" + *app + "'",
          std::move(data));
    }
    auto self = shared_from_this();
    if (method == "capability/list") {
      std::function<Result<json::value>()> work =
          [self, app = app_name, ws = text("workspaceId").value_or("")]() -> Result<json::value> {
        HEARTH_ASSIGN_OR_RETURN(auto list, self->bridge.list(app, ws));
        return json::value(json::object{{"appId", app}, {"capabilities", std::move(list)}});
      };
      co_return co_await blocking.run(work);
    }
    Invocation call;
    call.app = app_name;
    call.caller = caller;
    call.workspace = text("workspaceId").value_or("");
    auto capability = text("capability");
    auto name = text("method");
    if (!capability || !name) {
      co_return Error::make(ErrorCode::kInvalidParams,
                            "capability/invoke needs the strings capability and method");
    }
    call.capability = std::move(*capability);
    call.method = std::move(*name);
    if (const auto* args = p.if_contains("params"); args != nullptr && !args->is_null()) {
      if (!args->is_object()) {
        co_return Error::make(ErrorCode::kInvalidParams, "params.params must be an object");
      }
      call.params = *args;
    }
    std::function<Result<json::value>()> work = [self, call] { return self->bridge.invoke(call); };
    std::string lane = call.app;
    co_return co_await blocking.run_in(lane, work);
  }

  /// On the strand: sends a request to the backend and waits for its answer.
  asio::awaitable<Result<json::value>> request(std::shared_ptr<Entry> entry, std::string method,
                                               json::value params, milliseconds timeout,
                                               bool starting) {
    Entry& e = *entry;
    if (!e.transport || (!starting && e.phase != Entry::Phase::kRunning)) {
      co_return Error::make(ErrorCode::kHandlerError, e.label() + " is not running");
    }
    const std::int64_t id = ++e.next_id;
    auto p = std::make_shared<Entry::Pending>(strand);
    json::object m = message(method);
    m["id"] = id;
    if (!params.is_null()) m["params"] = std::move(params);
    e.pending.emplace(id, p);
    send(e, std::move(m));
    p->timer.expires_after(timeout);
    co_await p->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (p->failure) co_return *p->failure;
    if (!p->response) {
      e.pending.erase(id);
      json::object cancelled = message("notifications/cancelled");
      cancelled["params"] = json::object{{"requestId", id}, {"reason", "timed out in hearth"}};
      send(e, std::move(cancelled));
      co_return Error::make(ErrorCode::kTimeout,
                            e.label() + " did not answer " + method + " within " +
                                std::to_string(timeout.count()) + " ms",
                            json::object{{"timeoutMs", timeout.count()}});
    }
    auto& response = *p->response;
    if (const auto* error = response.if_contains("error"); error != nullptr) {
      json::object data{{"appId", e.app.name}, {"service", e.spec.key}};
      std::string text = "the backend answered an error";
      if (error->is_object()) {
        const auto& eo = error->get_object();
        if (const auto* c = eo.if_contains("code")) data["code"] = *c;
        if (const auto* msg = eo.if_contains("message"); msg != nullptr && msg->is_string()) {
          text = std::string(msg->get_string());
        }
        if (const auto* d = eo.if_contains("data")) data["data"] = *d;
      }
      co_return Error::make(ErrorCode::kHandlerError, e.label() + ": " + text, std::move(data));
    }
    if (const auto* result = response.if_contains("result")) co_return *result;
    co_return Error::make(ErrorCode::kHandlerError,
                          e.label() + " answered " + method + " with neither result nor error");
  }

  // --- callers --------------------------------------------------------------------------------

  /// On a blocking thread: why the app has no running backend `service`.
  Error why_absent(const std::string& app_name, const std::string& service) {
    auto app = store.find(app_name);
    if (!app.ok()) {
      return Error::make(ErrorCode::kInvalidParams, "no app named '" + app_name + "' is installed");
    }
    if (!app.value().enabled) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "the app '" + app_name + "' is not enabled: its backends do not run");
    }
    auto manifest = read_manifest(app.value().dir);
    if (!manifest.ok()) return manifest.error();
    const auto plan = plan_backends(manifest.value().front_matter, app.value().dir);
    for (const auto& n : plan.not_run) {
      if (service.empty() || n.key == service) {
        return Error::make(ErrorCode::kHandlerError, "the backend '" + n.key + "' of app '" +
                                                         app_name + "' is not run: " + n.reason);
      }
    }
    if (!service.empty()) {
      return Error::make(ErrorCode::kInvalidParams,
                         "the app '" + app_name + "' has no backend '" + service + "'");
    }
    return Error::make(ErrorCode::kInvalidParams,
                       "the app '" + app_name + "' has no backend hearth runs");
  }

  /// On the strand: the app's JS unit named `service`.
  std::shared_ptr<JsEntry> find_js(const std::string& app, const std::string& service) {
    if (service.empty()) return nullptr;
    auto it = js_entries.find({app, service});
    return it == js_entries.end() ? nullptr : it->second;
  }

  /// Runs `function` of a worker or workflow module in its JS worker pool, with ctx.invoke to
  /// the bridge as the app.
  asio::awaitable<Result<json::value>> call_js(std::shared_ptr<JsEntry> je, std::string function,
                                               json::value params) {
    auto self = shared_from_this();
    if (!options.jail) {
      co_return Error::make(ErrorCode::kPermissionDenied,
                            "hearth runs app code only under the jail, and it has none");
    }
    if (!je->pool) {
      // Only what was installed runs: the package's files are checked before the unit's
      // worker pool is made.
      const std::string when = je->unit.kind + " start";
      std::function<Status()> verify = [self, app = je->app, when] {
        return self->store.verify_installed(app, when);
      };
      auto intact = co_await blocking.run(verify);
      if (stopped) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
      if (!intact.ok()) {
        if (integrity_error(intact.error())) {
          spdlog::error("{}: {} '{}' not started", integrity_line(intact.error(), when),
                        je->unit.kind, je->unit.key);
          record(je->app.name, je->unit.key, "integrity.failed",
                 integrity_detail(intact.error(), when));
          const auto key = std::make_pair(je->app.name, je->unit.key);
          if (auto it = js_entries.find(key); it != js_entries.end() && it->second == je) {
            js_entries.erase(it);
          }
          wake.cancel();
        }
        co_return std::move(intact).error();
      }
    }
    if (!je->pool) {
      jsworker::PoolConfig config;
      config.service = je->app.name;
      config.service_dir = je->app.dir;
      if (je->unit.network == "remote-allowed") {
        auto policy = egress::NetworkPolicy::parse(je->unit.hosts);
        if (!policy.ok()) {
          co_return Error::make(ErrorCode::kPermissionDenied,
                                "the app's network domains: " + policy.error().message);
        }
        config.permissions.network_access = std::move(policy).value();
      } else {
        config.permissions.network_access = egress::NetworkPolicy(false);
      }
      config.permissions.max_memory = je->unit.memory_bytes;
      config.code_files = {je->app.dir.string()};  // the whole package, read-only
      config.size = 1;
      config.worker_program =
          options.js_worker.empty() ? jsworker::default_worker_program() : options.js_worker;
      config.jail = options.jail;
      je->pool = std::make_shared<jsworker::Pool>(strand.get_inner_executor(), std::move(config));
      je->pool->start();
    }
    jsworker::CallFunction request;
    request.module = je->unit.module;
    request.function = std::move(function);
    request.endpoint = je->unit.key;
    request.input = params.is_null() ? json::value(json::object()) : std::move(params);
    request.host_calls = true;
    jsworker::Job job;
    job.request = std::move(request);
    job.timeout = je->unit.call_timeout;
    job.label = je->unit.key;
    const std::string who =
        "app '" + je->app.name + "' " + je->unit.kind + " '" + je->unit.key + "'";
    job.on_log = [who](const jsworker::Log& log) { spdlog::info("{}: {}", who, log.message); };
    std::weak_ptr<State> weak = self;
    job.on_host_call = [weak, app = je->app.name, key = je->unit.key, kind = je->unit.kind](
                           const jsworker::HostCall& hc, std::function<void(json::object)> reply) {
      auto s = weak.lock();
      if (!s) {
        reply(answer_of(Error::make(ErrorCode::kHandlerError, "the daemon is stopping")));
        return;
      }
      asio::co_spawn(
          s->strand,
          [s, app, key, kind, call = hc.call,
           reply = std::move(reply)]() mutable -> asio::awaitable<void> {
            std::string method = "capability/invoke";
            std::string caller = kind + ":" + key;
            json::value args(std::move(call));
            auto r = co_await s->host_call(app, key, std::move(caller), std::move(method),
                                           std::move(args));
            reply(answer_of(r));
          },
          asio::detached);
    };
    auto pool = je->pool;
    auto ran = co_await pool->run(std::move(job));
    if (!ran.ok()) co_return std::move(ran).error();
    co_return std::move(ran.value().value);
  }

  /// On the strand.
  Result<std::shared_ptr<Entry>> find(const std::string& app, const std::string& service) {
    std::shared_ptr<Entry> only;
    int count = 0;
    for (const auto& [key, entry] : entries) {
      if (key.first != app) continue;
      if (!service.empty() && key.second == service) return entry;
      only = entry;
      ++count;
    }
    if (service.empty() && count == 1) return only;
    if (service.empty() && count > 1) {
      return Error::make(ErrorCode::kInvalidParams,
                         "the app '" + app + "' has several backends: name one in service");
    }
    return std::shared_ptr<Entry>();
  }

  asio::awaitable<Result<json::value>> call(std::string app, std::string service,
                                            std::string method, json::value params) {
    auto self = shared_from_this();
    if (stopped) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    auto js = find_js(app, service);
    HEARTH_CO_ASSIGN_OR_RETURN(auto entry, find(app, service));
    if (!entry && !js) {
      co_await reconcile();  // enabled a moment ago: start it now
      js = find_js(app, service);
      HEARTH_CO_ASSIGN_OR_RETURN(entry, find(app, service));
    }
    if (!entry && js) {
      co_return co_await call_js(js, std::move(method), std::move(params));
    }
    if (!entry) {
      std::function<Error()> work = [self, app, service] { return self->why_absent(app, service); };
      co_return co_await blocking.run(work);
    }
    auto up = co_await started(entry);
    if (!up.ok()) co_return std::move(up).error();
    co_return co_await request(entry, std::move(method), std::move(params),
                               entry->spec.call_timeout, false);
  }

  /// On the strand: the backend running, started now when it is not (waiting within
  /// start_timeout for a start under way), or why it is not running.
  asio::awaitable<Status> started(std::shared_ptr<Entry> entry) {
    auto self = shared_from_this();
    if (entry->phase == Entry::Phase::kStopped) {
      asio::co_spawn(strand, launch(entry), asio::detached);
    }
    const auto deadline = Clock::now() + options.start_timeout;
    while (entry->phase == Entry::Phase::kStarting || entry->phase == Entry::Phase::kStopped) {
      if (Clock::now() >= deadline || entry->removed) break;
      entry->changed.expires_at(deadline);
      co_await entry->changed.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (entry->phase == Entry::Phase::kRunning) co_return Status();
    json::object data{
        {"appId", entry->app.name}, {"service", entry->spec.key}, {"state", state_name(*entry)}};
    std::string text = entry->label() + " is not running";
    if (entry->phase == Entry::Phase::kRestarting) {
      const auto wait = std::max<std::int64_t>(0, ms(entry->next_start - Clock::now()));
      data["nextStartInMs"] = wait;
      data["reason"] = entry->reason;
      if (!entry->stderr_tail.empty()) data["stderrTail"] = entry->stderr_tail;
      text += ": " + entry->reason + " (it starts again in " + std::to_string(wait) + " ms)";
    } else if (entry->removed && !entry->reason.empty()) {
      data["reason"] = entry->reason;
      text += ": " + entry->reason;
    }
    co_return Error::make(ErrorCode::kHandlerError, std::move(text), std::move(data));
  }

  /// On the strand: the tools of the app's backends (see Backends::tools).
  asio::awaitable<json::object> tools(std::string app) {
    auto self = shared_from_this();
    json::array tools;
    json::array unavailable;
    if (stopped) co_return json::object{{"tools", std::move(tools)}, {"unavailable", unavailable}};
    const auto of_app = [this, &app] {
      std::vector<std::shared_ptr<Entry>> out;
      for (const auto& [key, entry] : entries) {
        if (key.first == app) out.push_back(entry);
      }
      return out;
    };
    auto mine = of_app();
    if (mine.empty()) {
      co_await reconcile();  // enabled a moment ago: start its backends now
      mine = of_app();
    }
    for (const auto& entry : mine) {
      if (entry->phase == Entry::Phase::kStopped) {
        asio::co_spawn(strand, launch(entry), asio::detached);
      }
    }
    for (const auto& entry : mine) {
      auto up = co_await started(entry);
      if (!up.ok()) {
        json::object out{{"service", entry->spec.key}, {"reason", up.error().message}};
        if (const auto* data = up.error().data.if_object()) {
          for (const auto* key : {"state", "stderrTail", "nextStartInMs"}) {
            if (const auto* v = data->if_contains(key)) out[key] = *v;
          }
        }
        unavailable.emplace_back(std::move(out));
        continue;
      }
      if (!entry->tools_listed) {
        co_await list_tools(entry, entry->run);
        if (entry->phase != Entry::Phase::kRunning) continue;
      }
      for (const auto& tool : entry->tools) {
        json::object t = tool.as_object();
        t["service"] = entry->spec.key;
        t["packageHash"] = entry->app.package_hash;
        tools.emplace_back(std::move(t));
      }
    }
    co_return json::object{{"tools", std::move(tools)}, {"unavailable", std::move(unavailable)}};
  }

  /// What a backend is doing, for status and errors: `failing` while it waits to start again
  /// after starts that did not come up, `restarting` after a run that did.
  static std::string_view state_name(const Entry& e) {
    if (e.phase == Entry::Phase::kRestarting && e.failed_starts > 0) return "failing";
    return phase_name(e.phase);
  }

  static std::string_view phase_name(Entry::Phase phase) {
    switch (phase) {
      case Entry::Phase::kStopped:
        return "stopped";
      case Entry::Phase::kStarting:
        return "starting";
      case Entry::Phase::kRunning:
        return "running";
      case Entry::Phase::kRestarting:
        return "restarting";
    }
    return "stopped";
  }

  asio::awaitable<json::array> status(std::string app) {
    auto self = shared_from_this();
    json::array out;
    const auto now = Clock::now();
    for (const auto& [key, e] : entries) {
      if (!app.empty() && key.first != app) continue;
      json::object o{{"appId", key.first},           {"service", key.second},
                     {"kind", "app-backend"},        {"version", e->app.version},
                     {"state", state_name(*e)},      {"starts", e->starts},
                     {"sinceMs", ms(now - e->since)}};
      o["pid"] = e->pid > 0 ? json::value(e->pid) : json::value(nullptr);
      o["lastExit"] = e->last_exit.empty() ? json::value(nullptr) : json::value(e->last_exit);
      if (e->phase == Entry::Phase::kRestarting) {
        o["reason"] = e->reason;
        o["nextStartInMs"] = std::max<std::int64_t>(0, ms(e->next_start - now));
        o["failures"] = e->failed_starts;
        o["stderrTail"] = e->stderr_tail;
      }
      if (e->tools_listed) {
        json::array names;
        for (const auto& t : e->tools) names.emplace_back(t.at("name"));
        o["tools"] = std::move(names);
        if (!e->tools_problem.empty()) o["toolsProblem"] = e->tools_problem;
      }
      out.emplace_back(std::move(o));
    }
    for (const auto& [key, je] : js_entries) {
      if (!app.empty() && key.first != app) continue;
      out.emplace_back(json::object{{"appId", key.first},
                                    {"service", key.second},
                                    {"kind", je->unit.kind},
                                    {"version", je->app.version},
                                    {"state", je->pool ? "warm" : "idle"},
                                    {"module", je->unit.module}});
    }
    co_return out;
  }

  void shutdown() {
    stopped = true;
    wake.cancel();
    for (auto& [_, e] : entries) {
      e->removed = true;
      close(*e, Error::make(ErrorCode::kHandlerError, "the daemon is stopping"));
      set_phase(*e, Entry::Phase::kStopped);
    }
    entries.clear();
    for (auto& [_, je] : js_entries) {
      if (je->pool) je->pool->stop();
    }
    js_entries.clear();
  }
};

std::shared_ptr<Backends> Backends::create(const asio::any_io_executor& executor, AppStore& store,
                                           Bridge& bridge, BlockingExecutor& blocking,
                                           BackendOptions options) {
  std::shared_ptr<Backends> out(new Backends());
  out->state_ = std::make_shared<State>(executor, store, bridge, blocking, std::move(options));
  return out;
}

Backends::~Backends() {
  stop();
}

void Backends::start() {
  auto s = state_;
  asio::co_spawn(s->strand, s->poll_loop(), asio::detached);
}

void Backends::stop(bool wait) {
  auto s = state_;
  if (s->stopped.exchange(true)) return;
  if (!wait) {
    asio::post(s->strand, [s] { s->shutdown(); });
    return;
  }
  if (s->strand.running_in_this_thread()) {
    s->shutdown();
    return;
  }
  // On the strand, and waited for: no process outlives the call. When the strand does not run
  // (its io_context has stopped), nothing else touches the state and it is shut down here.
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  auto taken = std::make_shared<std::atomic<bool>>(false);
  asio::post(s->strand, [s, done, taken] {
    if (taken->exchange(true)) return;
    s->shutdown();
    done->set_value();
  });
  if (finished.wait_for(std::chrono::seconds(2)) != std::future_status::ready &&
      !taken->exchange(true)) {
    s->shutdown();
  }
}

asio::awaitable<Result<json::value>> Backends::call(std::string app, std::string service,
                                                    std::string method, json::value params) {
  auto s = state_;
  co_return co_await hearth::on(
      s->strand, s->call(std::move(app), std::move(service), std::move(method), std::move(params)));
}

asio::awaitable<json::object> Backends::tools(std::string app) {
  auto s = state_;
  co_return co_await hearth::on(s->strand, s->tools(std::move(app)));
}

asio::awaitable<json::array> Backends::status(std::string app) {
  auto s = state_;
  co_return co_await hearth::on(s->strand, s->status(std::move(app)));
}

}  // namespace hearth::agentapp
