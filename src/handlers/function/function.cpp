#include "handlers/function/function.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <atomic>
#include <cassert>
#include <csignal>
#include <cmath>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>

#include "common/on_strand.hpp"
#include "common/utf8.hpp"
#include "handlers/confine.hpp"
#include "handlers/create.hpp"
#include "handlers/shared_helpers.hpp"
#include "js/frame.hpp"
#include "js/modules.hpp"
#include "proc/process.hpp"

namespace hearth::handlers::function {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

/// SpiderMonkey reserves address space it never touches (its JIT code area alone is 2 GiB on
/// x86-64), so RLIMIT_AS for a worker is maxMemory plus this; the memory cgroup and the JS heap
/// limit (JSGC_MAX_BYTES = maxMemory) bound what it really uses. Measured in docs/benchmarks.md.
constexpr std::uint64_t kWorkerAddressSpace = std::uint64_t{4} << 30;
/// What a warm worker uses before any call (resident), added to the memory cgroup's limit.
constexpr std::uint64_t kWorkerBaseline = std::uint64_t{64} << 20;
/// Consecutive failed starts after which a pool stops retrying on its own.
constexpr int kMaxStartFailures = 3;

fs::path default_worker() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("hearth-js-worker") : self.parent_path() / "hearth-js-worker";
}

// ---------------------------------------------------------------------------------------------
// The pool of one service and permission set.

struct CallSpec {
  std::string module;
  std::string function;
  std::string endpoint;
  json::value input;
  std::chrono::milliseconds timeout{30000};
  Publisher* publisher = nullptr;
  bool mutation = false;
};

class Pool;

/// One call waiting for, or running on, a worker. Touched only on the pool's strand.
struct Slot {
  explicit Slot(asio::strand<asio::any_io_executor>& strand) : timer(strand) {}
  std::uint64_t id = 0;
  CallSpec spec;
  asio::steady_timer timer;
  Clock::time_point deadline;
  std::optional<Result<json::value>> result;
  bool running = false;  ///< sent to a worker
  bool started = false;  ///< the worker said it began (before that, a dead worker ran none of it)
};

struct Worker {
  std::uint64_t serial = 0;
  std::shared_ptr<proc::Duplex> child;
  std::shared_ptr<Confinement> confinement;
  js::FrameReader reader;
  enum class State { kStarting, kIdle, kBusy, kGone } state = State::kStarting;
  std::shared_ptr<Slot> current;
  bool killed_for_time = false;
  std::string stderr_tail;
};

struct PoolConfig {
  std::string service;
  fs::path service_dir;
  manifest::Permissions permissions;
  std::vector<std::string> subscriptions;
  std::vector<std::string> code_files;  ///< absolute: modules and what they import
  std::size_t size = 2;
  fs::path worker_program;
  std::shared_ptr<const jail::Jail> jail;
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  Pool(asio::any_io_executor executor, PoolConfig config)
      : executor_(executor), strand_(asio::make_strand(executor)), config_(std::move(config)) {}

  /// Starts the workers (warm pool). Any thread.
  void start() {
    asio::dispatch(strand_, [self = shared_from_this()] { self->fill(); });
  }

  /// Stops every worker; calls in flight fail. Any thread; idempotent.
  void stop() {
    // Set at once: workers killed right after (daemon shutdown) must not be replaced.
    stopping_ = true;
    asio::dispatch(strand_, [self = shared_from_this()] {
      for (auto& w : self->workers_) self->retire(*w, /*kill=*/true);
      self->workers_.clear();
      for (auto& slot : self->queue_) {
        self->complete(*slot, Error::make(ErrorCode::kHandlerError, "the daemon is stopping"));
      }
      self->queue_.clear();
    });
  }

  /// A worker has said it is ready (or starting them failed): calls are answered without waiting
  /// for a start. Any thread.
  bool warm() const { return warm_.load() || stopping_; }

  void add_code_files(const std::vector<std::string>& files) {
    std::lock_guard lock(code_mutex_);
    for (const auto& f : files) {
      if (std::find(config_.code_files.begin(), config_.code_files.end(), f) ==
          config_.code_files.end()) {
        config_.code_files.push_back(f);
      }
    }
  }

  /// Runs a call on the pool's strand: the queue and the workers are touched only there.
  asio::awaitable<Result<json::value>> call(CallSpec spec) {
    // An awaitable resumes on its own coroutine's executor, so `co_await dispatch(strand_)`
    // would not keep the code after it on the strand: the call runs as a coroutine of its own,
    // spawned on the strand, and every resumption inside it stays there.
    auto self = shared_from_this();
    co_return co_await hearth::on(strand_, self->call_on_strand(std::move(spec)));
  }

 private:
  asio::awaitable<Result<json::value>> call_on_strand(CallSpec spec) {
    assert(strand_.running_in_this_thread());
    auto slot = std::make_shared<Slot>(strand_);
    slot->id = ++next_id_;
    slot->deadline = Clock::now() + spec.timeout;
    slot->spec = std::move(spec);
    if (stopping_) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    if (broken_ && workers_.empty()) {
      // Every start failed: try again for this call.
      broken_ = false;
      start_failures_ = 0;
    }
    // Armed before dispatching: a worker that takes the call moves it to the kill deadline.
    slot->timer.expires_at(slot->deadline);
    queue_.push_back(slot);
    fill();
    dispatch_queue();

    for (;;) {
      if (slot->result) break;
      auto [ec] = co_await slot->timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (slot->result) break;
      if (ec == asio::error::operation_aborted) continue;  // re-armed
      if (!slot->running) {
        queue_.erase(std::remove(queue_.begin(), queue_.end(), slot), queue_.end());
        complete(*slot, timeout_error(slot->spec.timeout, "no JavaScript worker became free"));
        break;
      }
      // The worker's own interrupt did not answer in time: kill it.
      for (auto& w : workers_) {
        if (w->current == slot) {
          spdlog::warn("{}.{}: JS worker {} ignored its time limit; killing it", config_.service,
                       slot->spec.endpoint, w->serial);
          w->killed_for_time = true;
          complete(*slot, timeout_error(slot->spec.timeout, {}));
          w->current.reset();
          retire(*w, /*kill=*/true);
        }
      }
      if (!slot->result) complete(*slot, timeout_error(slot->spec.timeout, {}));
      remove_gone();
      fill();
      break;
    }
    assert(strand_.running_in_this_thread());
    co_return std::move(*slot->result);
  }

  static Error timeout_error(std::chrono::milliseconds timeout, std::string why) {
    json::object data;
    data["timeoutMs"] = timeout.count();
    std::string message = "Handler timed out after " + std::to_string(timeout.count()) + " ms";
    if (!why.empty()) message += " (" + why + ")";
    return Error::make(ErrorCode::kTimeout, std::move(message), std::move(data));
  }

  void complete(Slot& slot, Result<json::value> result) {
    assert(strand_.running_in_this_thread());
    if (slot.result) return;
    slot.result = std::move(result);
    slot.timer.cancel();
  }

  /// Starts workers until the pool has its size. On the strand.
  void fill() {
    assert(strand_.running_in_this_thread());
    if (stopping_ || broken_) return;
    while (workers_.size() < config_.size) {
      if (!spawn()) break;
    }
  }

  bool spawn() {
    auto worker = std::make_shared<Worker>();
    worker->serial = ++next_serial_;
    proc::Command cmd;
    cmd.program = config_.worker_program;
    cmd.argv = {"hearth-js-worker"};
    cmd.cwd = config_.service_dir;
    cmd.env = environment_entries(base_environment(config_.service, config_.service_dir));
    if (config_.jail) {
      std::vector<std::string> code;
      {
        std::lock_guard lock(code_mutex_);
        code = config_.code_files;
      }
      ConfineExtras extras;
      extras.address_space = kWorkerAddressSpace;
      extras.memory = kWorkerBaseline;
      auto confinement = Confinement::start(*config_.jail, config_.permissions, config_.service_dir,
                                            code, cmd, executor_, config_.service + " (JS worker)",
                                            extras);
      if (!confinement.ok()) {
        fail_everything(confinement.error());
        return false;
      }
      worker->confinement = std::move(confinement).value();
    }
    std::weak_ptr<Pool> weak = weak_from_this();
    std::weak_ptr<Worker> weak_worker = worker;
    proc::Duplex::Callbacks callbacks;
    callbacks.on_stdout = [weak, weak_worker](std::string_view data) {
      auto pool = weak.lock();
      if (!pool) return;
      asio::post(pool->strand_, [pool, weak_worker, bytes = std::string(data)] {
        if (auto w = weak_worker.lock()) pool->on_bytes(*w, bytes);
      });
    };
    callbacks.on_stderr = [weak, weak_worker](std::string_view data) {
      auto pool = weak.lock();
      if (!pool) return;
      asio::post(pool->strand_, [weak_worker, bytes = std::string(data)] {
        if (auto w = weak_worker.lock()) {
          w->stderr_tail += bytes;
          if (w->stderr_tail.size() > 8192) w->stderr_tail.erase(0, w->stderr_tail.size() - 4096);
        }
      });
    };
    callbacks.on_exit = [weak, weak_worker](const proc::RunResult& result) {
      auto pool = weak.lock();
      if (!pool) return;
      asio::post(pool->strand_, [pool, weak_worker, result] {
        if (auto w = weak_worker.lock()) pool->on_exit(w, result);
      });
    };
    auto child = proc::start_duplex(executor_, cmd, std::move(callbacks));
    if (!child.ok()) {
      fail_everything(child.error());
      return false;
    }
    worker->child = std::move(child).value();
    json::object init;
    init["t"] = "init";
    init["service"] = config_.service;
    init["serviceDir"] = config_.service_dir.string();
    if (config_.permissions.file_access) {
      json::array globs;
      for (const auto& g : *config_.permissions.file_access) globs.emplace_back(g);
      init["fileAccess"] = std::move(globs);
    }
    json::value network = false;
    if (const auto& net = config_.permissions.network_access) {
      if (const auto* all = std::get_if<bool>(&*net)) {
        network = *all;
      } else {
        json::array hosts;
        for (const auto& h : std::get<std::vector<std::string>>(*net)) hosts.emplace_back(h);
        network = std::move(hosts);
      }
    }
    init["network"] = std::move(network);
    if (config_.permissions.max_memory) init["maxHeap"] = *config_.permissions.max_memory;
    json::array subs;
    for (const auto& s : config_.subscriptions) subs.emplace_back(s);
    init["subscriptions"] = std::move(subs);
    worker->child->write(js::encode_frame(json::serialize(init)));
    workers_.push_back(std::move(worker));
    return true;
  }

  /// No worker can start: fail what waits, stop retrying until the next call.
  void fail_everything(const Error& error) {
    spdlog::error("{}: cannot start a JavaScript worker: {}", config_.service, error.message);
    broken_ = true;
    warm_ = true;  // nothing more to wait for
    for (auto& slot : queue_) complete(*slot, error);
    queue_.clear();
  }

  void on_bytes(Worker& w, const std::string& bytes) {
    if (w.state == Worker::State::kGone) return;
    w.reader.feed(bytes);
    while (auto frame = w.reader.next()) {
      auto parsed = json::parse_text(*frame);
      if (!parsed.ok() || !parsed.value().is_object()) {
        spdlog::error("{}: JS worker {} sent a malformed frame; replacing it", config_.service,
                      w.serial);
        retire(w, /*kill=*/true);
        return;
      }
      on_message(w, parsed.value().get_object());
      if (w.state == Worker::State::kGone) return;
    }
    if (w.reader.failed()) {
      spdlog::error("{}: JS worker {} sent an oversized frame; replacing it", config_.service,
                    w.serial);
      retire(w, /*kill=*/true);
    }
  }

  static std::string text(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  }

  void on_message(Worker& w, const json::object& m) {
    const std::string type = text(m, "t");
    if (type == "ready") {
      warm_ = true;
      w.state = Worker::State::kIdle;
      start_failures_ = 0;
      dispatch_queue();
      return;
    }
    const auto* id = m.if_contains("id");
    if (!w.current || id == nullptr || !id->is_number() ||
        id->to_number<std::uint64_t>() != w.current->id) {
      return;  // about a call that already ended (timed out)
    }
    Slot& slot = *w.current;
    const std::string who = config_.service + "." + slot.spec.endpoint;
    if (type == "start") {
      slot.started = true;
    } else if (type == "log") {
      const std::string level = text(m, "level");
      const std::string message = text(m, "message");
      if (level == "error") {
        spdlog::error("{}: {}", who, message);
      } else if (level == "warn") {
        spdlog::warn("{}: {}", who, message);
      } else if (level == "debug") {
        spdlog::debug("{}: {}", who, message);
      } else {
        spdlog::info("{}: {}", who, message);
      }
    } else if (type == "publish") {
      const auto* data = m.if_contains("data");
      if (slot.spec.publisher == nullptr ||
          !slot.spec.publisher->publish(text(m, "subscription"),
                                        data != nullptr ? *data : json::value(nullptr))) {
        spdlog::warn("{}: ctx.publish to '{}' was not delivered", who, text(m, "subscription"));
      }
    } else if (type == "result") {
      const auto* value = m.if_contains("value");
      complete(slot, value != nullptr ? *value : json::value(nullptr));
      finish_call(w);
    } else if (type == "error") {
      complete(slot, to_error(slot, m));
      if (text(m, "kind") == "oom") {
        // The worker exits after its heap limit: no further call may be sent to it.
        w.current.reset();
        retire(w, /*kill=*/false);
        return;
      }
      finish_call(w);
    }
  }

  Error to_error(const Slot& slot, const json::object& m) const {
    const std::string kind = text(m, "kind");
    if (kind == "timeout") return timeout_error(slot.spec.timeout, {});
    json::object data;
    if (kind == "oom") {
      if (config_.permissions.max_memory) data["maxMemory"] = *config_.permissions.max_memory;
      return Error::make(ErrorCode::kHandlerError, "memory limit exceeded", std::move(data));
    }
    for (const char* key : {"name", "stack", "file"}) {
      if (auto v = text(m, key); !v.empty()) data[key] = valid_utf8(v);
    }
    for (const char* key : {"line", "column"}) {
      if (const auto* v = m.if_contains(key); v != nullptr && v->is_number() &&
                                              v->to_number<std::int64_t>() > 0) {
        data[key] = *v;
      }
    }
    if (kind == "config") {
      data["module"] = slot.spec.module;
      data["function"] = slot.spec.function;
    }
    std::string message = valid_utf8(text(m, "message"));
    if (message.empty()) message = "the JavaScript function failed";
    return Error::make(kind == "permission" ? ErrorCode::kPermissionDenied : ErrorCode::kHandlerError,
                       std::move(message), std::move(data));
  }

  void finish_call(Worker& w) {
    w.current.reset();
    if (w.state == Worker::State::kBusy) w.state = Worker::State::kIdle;
    dispatch_queue();
  }

  /// Hands queued calls to idle workers. On the strand.
  void dispatch_queue() {
    assert(strand_.running_in_this_thread());
    for (auto& w : workers_) {
      if (queue_.empty()) return;
      if (w->state != Worker::State::kIdle) continue;
      auto slot = queue_.front();
      queue_.pop_front();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(slot->deadline -
                                                                             Clock::now());
      if (left <= 0ms) {
        complete(*slot, timeout_error(slot->spec.timeout, "no JavaScript worker became free"));
        continue;
      }
      json::object call;
      call["t"] = "call";
      call["id"] = slot->id;
      call["module"] = slot->spec.module;
      call["function"] = slot->spec.function;
      call["endpoint"] = slot->spec.endpoint;
      call["input"] = slot->spec.input;
      call["timeoutMs"] = left.count();
      if (slot->spec.mutation) call["mutation"] = true;
      if (!w->child->write(js::encode_frame(json::serialize(call)))) {
        queue_.push_front(slot);
        retire(*w, /*kill=*/true);
        continue;
      }
      w->state = Worker::State::kBusy;
      w->current = slot;
      slot->running = true;
      // The worker interrupts itself at the deadline; the daemon kills it a grace period later.
      slot->timer.expires_at(slot->deadline + kill_grace());
    }
  }

  static std::chrono::milliseconds kill_grace() { return 1000ms; }

  /// Takes a worker out of service (its call, if any, is failed by on_exit or by the caller).
  void retire(Worker& w, bool kill) {
    if (w.state == Worker::State::kGone) return;
    w.state = Worker::State::kGone;
    if (kill && w.child) {
      const int pid = w.child->pid();
      w.child->stop();
      if (w.confinement) w.confinement->abandon(pid);
    }
    if (w.current) {
      complete(*w.current, Error::make(ErrorCode::kHandlerError,
                                       "the JavaScript worker running this call was stopped"));
      w.current.reset();
    }
  }

  void remove_gone() {
    workers_.erase(std::remove_if(workers_.begin(), workers_.end(),
                                  [](const auto& w) { return w->state == Worker::State::kGone; }),
                   workers_.end());
  }

  void on_exit(const std::shared_ptr<Worker>& w, const proc::RunResult& result) {
    const bool was_starting = w->state == Worker::State::kStarting;
    std::optional<Error> verdict;
    if (w->confinement) verdict = w->confinement->finish(result);
    if (w->current && !w->current->started && !w->current->result && !stopping_) {
      // Died before it began the call: nothing of it ran, another worker takes it.
      auto slot = w->current;
      w->current.reset();
      slot->running = false;
      slot->timer.expires_at(slot->deadline);
      queue_.push_front(std::move(slot));
    }
    if (w->current) {
      Slot& slot = *w->current;
      if (verdict) {
        complete(slot, *verdict);
      } else {
        json::object data;
        std::string how;
        if (result.status == proc::RunResult::Status::kSignaled) {
          how = "was killed by signal " + std::to_string(result.signal);
          data["signal"] = result.signal;
        } else {
          how = "exited with code " + std::to_string(result.exit_code);
          data["exitCode"] = result.exit_code;
        }
        data["stderr"] = valid_utf8(w->stderr_tail.size() > 4096
                                        ? w->stderr_tail.substr(w->stderr_tail.size() - 4096)
                                        : w->stderr_tail);
        // Memory only on evidence: the jail's OOM verdict (above), an out-of-memory message,
        // or the engine's own crash on a failed allocation. A SIGKILL or SIGTERM without a
        // verdict came from outside hearth and is reported as such.
        const bool signaled = result.status == proc::RunResult::Status::kSignaled;
        const bool from_outside = signaled && (result.signal == SIGKILL || result.signal == SIGTERM);
        const bool engine_oom = signaled && !from_outside &&
                                w->stderr_tail.find("MOZ_CRASH") != std::string::npos;
        if (from_outside) how += " from outside hearth";
        if (config_.permissions.max_memory && (looks_out_of_memory(w->stderr_tail) || engine_oom)) {
          data["maxMemory"] = *config_.permissions.max_memory;
          complete(slot, Error::make(ErrorCode::kHandlerError,
                                     "memory limit exceeded (the JavaScript worker " + how + ")",
                                     std::move(data)));
        } else {
          complete(slot, Error::make(ErrorCode::kHandlerError,
                                     "the JavaScript worker crashed during the call (it " + how + ")",
                                     std::move(data)));
        }
      }
      w->current.reset();
    }
    if (w->state != Worker::State::kGone && !stopping_) {
      if (was_starting) {
        ++start_failures_;
        spdlog::error("{}: a JavaScript worker failed to start: {}{}", config_.service,
                      verdict ? verdict->message : std::string(),
                      w->stderr_tail.empty() ? "" : " - " + valid_utf8(w->stderr_tail));
        if (start_failures_ >= kMaxStartFailures) {
          std::string why = verdict ? verdict->message : valid_utf8(w->stderr_tail);
          json::object data;
          data["stderr"] = valid_utf8(w->stderr_tail);
          fail_everything(Error::make(
              ErrorCode::kHandlerError,
              "JavaScript workers for service '" + config_.service + "' cannot start" +
                  (why.empty() ? std::string() : ": " + why),
              std::move(data)));
        }
      } else if (!w->killed_for_time) {
        spdlog::warn("{}: JavaScript worker {} ended ({}); starting another", config_.service,
                     w->serial,
                     result.status == proc::RunResult::Status::kSignaled
                         ? "signal " + std::to_string(result.signal)
                         : "exit code " + std::to_string(result.exit_code));
      }
    }
    w->state = Worker::State::kGone;
    remove_gone();
    if (!stopping_) {
      fill();
      dispatch_queue();
    }
  }

  asio::any_io_executor executor_;
  asio::strand<asio::any_io_executor> strand_;
  PoolConfig config_;
  std::mutex code_mutex_;  ///< guards config_.code_files (added while endpoints are created)
  std::vector<std::shared_ptr<Worker>> workers_;
  std::deque<std::shared_ptr<Slot>> queue_;
  std::uint64_t next_id_ = 0;
  std::uint64_t next_serial_ = 0;
  int start_failures_ = 0;
  bool broken_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> warm_{false};  ///< a worker was ready once, or starting gave up
};

// ---------------------------------------------------------------------------------------------
// Handlers and the kind.

struct Config {
  std::string module;    ///< relative, normalised
  std::string function;
  std::chrono::milliseconds timeout{0};  ///< the handler's own; 0: none
};

class FunctionStream final : public Stream {
 public:
  void close() override { closed_ = true; }
  std::atomic<bool> closed_{false};
};

class FunctionHandler final : public Handler {
 public:
  FunctionHandler(Config config, std::string endpoint, std::function<std::shared_ptr<Pool>(
                                                           const asio::any_io_executor&)> pool)
      : config_(std::move(config)), endpoint_(std::move(endpoint)), pool_(std::move(pool)) {}

  asio::awaitable<Result<json::value>> call(Call call) override {
    auto pool = pool_(call.executor);
    if (!pool) co_return no_pool(call);
    co_return co_await pool->call(spec(call));
  }

  /// The function runs once per subscriber: its result is that subscriber's snapshot.
  bool shares_streams() const override { return false; }

  Result<std::shared_ptr<Stream>> open_stream(Call call, StreamSink sink) override {
    if (!call.executor) {
      return Error::make(ErrorCode::kInternalError, "no executor to run the subscription on");
    }
    auto pool = pool_(call.executor);
    if (!pool) return no_pool(call);
    // The function runs once when the subscription opens: its result (unless null) is the first
    // item; later items come from ctx.publish in other calls. The stream ends only when closed.
    auto stream = std::make_shared<FunctionStream>();
    auto executor = call.executor;
    asio::co_spawn(
        executor,
        [pool, stream, sink = std::move(sink),
         s = spec(call)]() mutable -> asio::awaitable<void> {
          auto result = co_await pool->call(std::move(s));
          if (stream->closed_) co_return;
          if (!result.ok()) {
            if (sink.on_end) sink.on_end(std::move(result).error());
          } else if (!result.value().is_null() && sink.on_data) {
            sink.on_data(std::move(result).value());
          }
        },
        asio::detached);
    return std::shared_ptr<Stream>(stream);
  }

 private:
  /// Why there is no pool: no executor to start it on, or the daemon stopped the kind.
  static Error no_pool(const Call& call) {
    if (!call.executor) return Error::make(ErrorCode::kInternalError, "no executor for JS workers");
    return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
  }

  CallSpec spec(const Call& call) const {
    CallSpec s;
    s.module = config_.module;
    s.function = config_.function;
    s.endpoint = endpoint_;
    s.input = call.input;
    s.timeout = call.limit(config_.timeout);
    s.publisher = call.publisher;
    s.mutation = call.endpoint != nullptr && call.endpoint->method == manifest::Method::kMutation;
    return s;
  }

  Config config_;
  std::string endpoint_;
  std::function<std::shared_ptr<Pool>(const asio::any_io_executor&)> pool_;
};

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

class FunctionKind final : public Kind {
 public:
  explicit FunctionKind(const KindOptions& options) : options_(options) {
    if (options_.js_worker.empty()) options_.js_worker = default_worker();
  }

  ~FunctionKind() override { shutdown(); }

  void shutdown() override { pools_.shutdown(); }

  void release(const std::filesystem::path& service_dir) override {
    pools_.release(service_folder(service_dir));
  }

  std::string_view name() const override { return "function"; }

  bool ready() const override {
    bool all = true;
    pools_.for_each([&all](Pool& pool) { all = all && pool.warm(); });
    return all;
  }

  void check(const json::object& handler, const std::string& path,
             Problems& problems) const override {
    auto add = [&](const std::string& field, std::string message) {
      problems.push_back({join_path(path, field), std::move(message)});
    };
    const auto* module = handler.if_contains("module");
    if (module == nullptr) {
      add("module", "is required (the JavaScript module file, relative to the service folder)");
    } else if (!module->is_string() || module->get_string().empty()) {
      add("module", "must be a non-empty string (a file relative to the service folder)");
    } else if (has_nul(module->get_string())) {
      add("module", "must not contain NUL characters");
    } else {
      const std::string m(module->get_string());
      const fs::path p(m);
      const auto normal = p.lexically_normal();
      if (p.is_absolute() || normal.empty() || *normal.begin() == "..") {
        add("module", "must be a path inside the service folder");
      } else if (auto ts = js::typescript_refusal(m); !ts.empty()) {
        add("module", ts);
      } else if (const auto ext = p.extension();
                 ext != ".js" && ext != ".mjs" && ext != ".cjs") {
        add("module", "must name a JavaScript file (.js, .mjs or .cjs)");
      }
    }
    const auto* fn = handler.if_contains("function");
    if (fn == nullptr) {
      add("function", "is required (the name of the exported function)");
    } else if (!fn->is_string() || fn->get_string().empty() || has_nul(fn->get_string())) {
      add("function", "must be a non-empty string (the exported function's name)");
    }
    check_handler_timeout(handler, path, problems);
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest& service,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_RETURN_IF_ERROR(check_before_create(*this, endpoint.handler));
    const fs::path dir = service_folder(service.dir);
    std::error_code ec;
    Config config;
    config.module = fs::path(std::string(endpoint.handler.at("module").get_string()))
                        .lexically_normal()
                        .generic_string();
    config.function = std::string(endpoint.handler.at("function").get_string());
    config.timeout = handler_timeout(endpoint.handler);
    const fs::path file = dir / config.module;
    const fs::path real = fs::weakly_canonical(file, ec);
    if (ec || !fs::is_regular_file(real, ec)) {
      return Error::make(ErrorCode::kInternalError,
                         "handler.module '" + config.module + "' does not exist in " + dir.string());
    }
    if (!js::is_inside(dir, real)) {
      return Error::make(ErrorCode::kInternalError,
                         "handler.module '" + config.module + "' leads outside the service folder");
    }

    // A static import that cannot load (outside the folder, a package, missing) would fail every
    // call: refused at load instead, so `hearth check` and `hearth serve` report it.
    if (auto problems = js::import_problems(dir, config.module); !problems.empty()) {
      std::string message = "handler.module '" + config.module + "' has imports that cannot load: ";
      for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
      return Error::make(ErrorCode::kInternalError, std::move(message));
    }

    // The folders the worker's jail must let it read: the module and what it imports.
    std::vector<std::string> code;
    for (const auto& rel : js::scan_imports(dir, config.module)) code.push_back((dir / rel).string());

    PoolConfig pool_config;
    pool_config.service = service.name;
    pool_config.service_dir = dir;
    pool_config.permissions = endpoint.effective;
    for (const auto& ep : service.endpoints) {
      if (ep.method == manifest::Method::kSubscription) pool_config.subscriptions.push_back(ep.id);
    }
    pool_config.code_files = std::move(code);
    pool_config.size = std::max<std::size_t>(1, options_.js_workers);
    pool_config.worker_program = options_.js_worker;
    pool_config.jail = options_.jail;

    // Endpoints with the same permissions share a pool (a worker's jail is made from them).
    const std::vector<std::string> code_files = pool_config.code_files;
    auto slot = pools_.slot(dir, json::serialize(json::value(endpoint.effective.to_json())),
                            std::move(pool_config), [&code_files](PoolConfig& shared, Pool* pool) {
                              if (pool != nullptr) {
                                pool->add_code_files(code_files);
                              } else {
                                for (const auto& f : code_files) shared.code_files.push_back(f);
                              }
                            });
    // Without a daemon-wide executor (tests), the pool starts on the first call's executor.
    auto get_pool = [slot](const asio::any_io_executor& executor) -> std::shared_ptr<Pool> {
      return slot->get([&executor](const PoolConfig& c) -> std::shared_ptr<Pool> {
        if (!executor) return nullptr;
        auto pool = std::make_shared<Pool>(executor, c);
        pool->start();
        return pool;
      });
    };
    if (options_.executor && options_.warm_pools) get_pool(options_.executor);
    return std::unique_ptr<Handler>(
        std::make_unique<FunctionHandler>(std::move(config), endpoint.id, std::move(get_pool)));
  }

 private:
  KindOptions options_;
  mutable SharedHelpers<Pool, PoolConfig> pools_;
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<FunctionKind>(options);
}

}  // namespace hearth::handlers::function
