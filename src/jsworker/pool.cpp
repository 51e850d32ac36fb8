// GCC 12 reports -Wnull-dereference inside inlined Asio code (false positives in Boost headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "jsworker/pool.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cassert>
#include <csignal>
#include <deque>
#include <optional>
#pragma GCC diagnostic pop

#include "common/installed.hpp"
#include "common/on_strand.hpp"
#include "common/utf8.hpp"
#include "confine/confine.hpp"
#include "js/frame.hpp"
#include "json/json.hpp"
#include "proc/process.hpp"

namespace hearth::jsworker {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using confine::Confinement;

namespace {

/// SpiderMonkey reserves address space it never touches (its JIT code area alone is 2 GiB on
/// x86-64), so RLIMIT_AS for a worker is maxMemory plus this; the memory cgroup and the JS heap
/// limit (JSGC_MAX_BYTES = maxMemory) bound what it really uses. Measured in docs/benchmarks.md.
constexpr std::uint64_t kWorkerAddressSpace = std::uint64_t{4} << 30;
/// What a warm worker uses before any call (resident), added to the memory cgroup's limit.
constexpr std::uint64_t kWorkerBaseline = std::uint64_t{64} << 20;
/// The most labels whose typical run time a pool remembers (Pool::typical_).
constexpr std::size_t kMaxTypical = 1024;
/// The most requests written behind a busy worker's current one (Pool::may_wait_behind).
constexpr std::size_t kMaxBehind = 8;

std::uint64_t& id_of(std::variant<CallFunction, EvaluateSource>& request) {
  return std::visit([](auto& r) -> std::uint64_t& { return r.id; }, request);
}

std::chrono::milliseconds& timeout_of(std::variant<CallFunction, EvaluateSource>& request) {
  return std::visit([](auto& r) -> std::chrono::milliseconds& { return r.timeout; }, request);
}

}  // namespace

fs::path default_worker_program() {
  return installed::helper("hearth-js-worker", installed::self_exe());
}

Error timeout_error(std::chrono::milliseconds timeout, const std::string& why) {
  json::object data;
  data["timeoutMs"] = timeout.count();
  std::string message = "Handler timed out after " + std::to_string(timeout.count()) + " ms";
  if (!why.empty()) message += " (" + why + ")";
  return Error::make(ErrorCode::kTimeout, std::move(message), std::move(data));
}

/// One request waiting for, or running on, a worker. Touched only on the pool's strand.
struct Pool::Slot {
  explicit Slot(asio::strand<asio::any_io_executor>& strand) : timer(strand) {}
  std::uint64_t id = 0;
  Job job;
  asio::steady_timer timer;
  Clock::time_point deadline;
  std::optional<Result<Returned>> result;
  bool running = false;    ///< sent to a worker
  bool pipelined = false;  ///< sent to a busy worker, behind its current request
  bool started = false;    ///< the worker said it began (before that, a dead worker ran none of it)
  Clock::time_point began;  ///< when it became its worker's current request
};

struct Pool::Worker {
  std::uint64_t serial = 0;
  std::shared_ptr<proc::Duplex> child;
  std::shared_ptr<Confinement> confinement;
  js::FrameReader reader;
  /// kCollecting: idle, but collecting garbage in full before it reads anything (a few ms).
  enum class State { kStarting, kIdle, kCollecting, kBusy, kGone } state = State::kStarting;
  std::shared_ptr<Slot> current;
  /// Written behind `current` (pipelined), oldest first: the worker reads each when it has
  /// answered the one before.
  std::deque<std::shared_ptr<Slot>> behind;
  bool killed_for_time = false;
  std::string stderr_tail;
};

Pool::Pool(const asio::any_io_executor& executor, PoolConfig config)
    : executor_(executor), strand_(asio::make_strand(executor)), config_(std::move(config)) {}

Pool::~Pool() = default;

void Pool::start() {
  asio::dispatch(strand_, [self = shared_from_this()] { self->fill(); });
}

void Pool::stop() {
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

void Pool::add_code_files(const std::vector<std::string>& files) {
  std::lock_guard lock(code_mutex_);
  for (const auto& f : files) {
    if (std::find(config_.code_files.begin(), config_.code_files.end(), f) ==
        config_.code_files.end()) {
      config_.code_files.push_back(f);
    }
  }
}

asio::awaitable<Result<Returned>> Pool::run(Job job) {
  // An awaitable resumes on its own coroutine's executor, so `co_await dispatch(strand_)`
  // would not keep the code after it on the strand: the request runs as a coroutine of its own,
  // spawned on the strand, and every resumption inside it stays there.
  auto self = shared_from_this();
  auto work = self->run_on_strand(std::move(job));
  co_return co_await hearth::on(strand_, std::move(work));
}

asio::awaitable<Result<Returned>> Pool::run_on_strand(Job job) {
  assert(strand_.running_in_this_thread());
  auto slot = std::make_shared<Slot>(strand_);
  slot->id = ++next_id_;
  slot->deadline = Clock::now() + job.timeout;
  slot->job = std::move(job);
  id_of(slot->job.request) = slot->id;
  const auto timeout = slot->job.timeout;
  if (stopping_) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
  if (broken_ && workers_.empty()) {
    // Every start failed: try again for this request.
    broken_ = false;
    start_failures_ = 0;
  }
  // Armed before dispatching: a worker that takes the request moves it to the kill deadline.
  slot->timer.expires_at(slot->deadline);
  queue_.push_back(slot);
  fill();
  dispatch_queue();

  for (;;) {
    if (slot->result) break;
    auto [ec] = co_await slot->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (slot->result) break;
    if (ec == asio::error::operation_aborted) continue;  // re-armed
    if (!slot->running || slot->pipelined) {
      // Still waiting: in the queue, or in a worker's input behind a request that runs on (the
      // worker will find its deadline passed and run none of it).
      queue_.erase(std::remove(queue_.begin(), queue_.end(), slot), queue_.end());
      complete(*slot, timeout_error(timeout, "no JavaScript worker became free"));
      break;
    }
    // The worker's own interrupt did not answer in time: kill it.
    for (auto& w : workers_) {
      if (w->current == slot) {
        spdlog::warn("{}.{}: JS worker {} ignored its time limit; killing it", config_.service,
                     slot->job.label, w->serial);
        w->killed_for_time = true;
        complete(*slot, timeout_error(timeout));
        w->current.reset();
        retire(*w, /*kill=*/true);
      }
    }
    if (!slot->result) complete(*slot, timeout_error(timeout));
    remove_gone();
    fill();
    dispatch_queue();  // what the killed worker had been given behind the request
    break;
  }
  assert(strand_.running_in_this_thread());
  co_return std::move(*slot->result);
}

void Pool::complete(Slot& slot, Result<Returned> result) {
  assert(strand_.running_in_this_thread());
  if (slot.result) return;
  slot.result = std::move(result);
  slot.timer.cancel();
}

/// Starts workers until the pool has its size. On the strand.
void Pool::fill() {
  assert(strand_.running_in_this_thread());
  if (stopping_ || broken_) return;
  while (workers_.size() < config_.size) {
    if (!spawn()) break;
  }
}

Init Pool::init_message() const {
  Init init;
  init.service = config_.service;
  init.service_dir = config_.service_dir.string();
  init.file_access = config_.permissions.file_access;
  if (const auto& net = config_.permissions.network_access) {
    // As written in the manifest: the worker parses the list again (egress::NetworkPolicy).
    if (net->mode() == egress::NetworkPolicy::Mode::kList) {
      init.network = net->list().entries();
    } else {
      init.network = net->mode() == egress::NetworkPolicy::Mode::kAny;
    }
  }
  init.max_heap = config_.permissions.max_memory;
  init.subscriptions = config_.subscriptions;
  return init;
}

bool Pool::spawn() {
  auto worker = std::make_shared<Worker>();
  worker->serial = ++next_serial_;
  proc::Command cmd;
  cmd.program = config_.worker_program;
  cmd.argv = {"hearth-js-worker"};
  cmd.cwd = config_.service_dir;
  cmd.env =
      confine::environment_entries(confine::base_environment(config_.service, config_.service_dir));
  if (config_.jail) {
    std::vector<std::string> code;
    {
      std::lock_guard lock(code_mutex_);
      code = config_.code_files;
    }
    confine::ConfineExtras extras;
    extras.address_space = kWorkerAddressSpace;
    extras.memory = kWorkerBaseline;
    auto confinement =
        Confinement::start(*config_.jail, config_.permissions, config_.service_dir, code, cmd,
                           executor_, config_.service + " (JS worker)", extras);
    if (!confinement.ok()) {
      fail_everything(confinement.error());
      return false;
    }
    worker->confinement = std::move(confinement).value();
  }
  // The worker's output is handled right in its callbacks, which run on this pool's strand
  // (start_duplex_on): no copy of each chunk and no hop per chunk.
  auto callbacks = proc::callbacks_for(shared_from_this(), worker, &Pool::on_bytes, &Pool::on_exit,
                                       &Worker::stderr_tail, 4096);
  auto child = proc::start_duplex_on(strand_, cmd, std::move(callbacks));
  if (!child.ok()) {
    fail_everything(child.error());
    return false;
  }
  worker->child = std::move(child).value();
  worker->child->write(frame(encode(ToWorker(init_message()))));
  workers_.push_back(std::move(worker));
  return true;
}

/// No worker can start: fail what waits, stop retrying until the next request.
void Pool::fail_everything(const Error& error) {
  spdlog::error("{}: cannot start a JavaScript worker: {}", config_.service, error.message);
  broken_ = true;
  warm_ = true;  // nothing more to wait for
  for (auto& slot : queue_) complete(*slot, error);
  queue_.clear();
}

void Pool::on_bytes(const std::shared_ptr<Worker>& worker, std::string_view bytes) {
  Worker& w = *worker;
  if (w.state == Worker::State::kGone) return;
  w.reader.feed(bytes);
  while (auto payload = w.reader.next()) {
    // JSON.stringify writes a double of 2^64 or more in full up to 1e21 (1e20 as
    // 100000000000000000000): read as the double it is, not refused as an integer beyond 64
    // bits (which took the worker for broken). JavaScript never writes a number beyond a double.
    auto parsed = json::parse_text(*payload, json::ParseLimits{.clamp_numbers = true});
    auto message = parsed.ok() ? decode_from_worker(parsed.value())
                               : Result<FromWorker>(std::move(parsed).error());
    if (!message.ok()) {
      spdlog::error("{}: JS worker {} sent a malformed frame ({}); replacing it", config_.service,
                    w.serial, message.error().message);
      retire(w, /*kill=*/true);
      return;
    }
    on_message(w, std::move(message).value());
    if (w.state == Worker::State::kGone) return;
  }
  if (w.reader.failed()) {
    spdlog::error("{}: JS worker {} sent an oversized frame; replacing it", config_.service,
                  w.serial);
    retire(w, /*kill=*/true);
  }
}

void Pool::on_message(Worker& w, FromWorker message) {
  if (std::holds_alternative<Ready>(message)) {
    warm_ = true;
    w.state = Worker::State::kIdle;
    start_failures_ = 0;
    dispatch_queue();
    return;
  }
  if (std::holds_alternative<Collected>(message)) {
    if (w.state == Worker::State::kCollecting) {
      w.state = Worker::State::kIdle;
      dispatch_queue();
    }
    return;
  }
  if (!w.current || request_id(message) != w.current->id) {
    return;  // about a request that already ended (timed out)
  }
  Slot& slot = *w.current;
  if (std::holds_alternative<Started>(message)) {
    slot.started = true;
  } else if (auto* log = std::get_if<Log>(&message)) {
    if (slot.job.on_log) slot.job.on_log(*log);
  } else if (auto* publish = std::get_if<Publish>(&message)) {
    if (slot.job.on_publish) slot.job.on_publish(*publish);
  } else if (auto* call = std::get_if<HostCall>(&message)) {
    // The answer goes to this worker while it still runs this request (a worker killed for
    // time, or a request that ended, gets nothing).
    std::weak_ptr<Pool> weak = shared_from_this();
    std::weak_ptr<Slot> weak_slot = w.current;
    const std::uint64_t id = call->id;
    auto reply = [weak, weak_slot, id](json::object answer) {
      auto self = weak.lock();
      if (!self) return;
      asio::dispatch(self->strand_, [self, weak_slot, id, answer = std::move(answer)]() mutable {
        auto current = weak_slot.lock();
        if (!current) return;
        for (const auto& worker : self->workers_) {
          if (worker->current == current && worker->state == Worker::State::kBusy) {
            worker->child->write(frame(encode(ToWorker(HostAnswer{id, std::move(answer)}))));
            return;
          }
        }
      });
    };
    if (slot.job.on_host_call) {
      slot.job.on_host_call(*call, std::move(reply));
    } else {
      reply(json::object{
          {"error", json::object{{"code", static_cast<int>(ErrorCode::kPermissionDenied)},
                                 {"message", "this call may not reach the host"}}}});
    }
  } else if (auto* returned = std::get_if<Returned>(&message)) {
    const bool collecting = returned->collecting;
    complete(slot, std::move(*returned));
    finish_request(w, collecting);
  } else if (auto* failed = std::get_if<Failed>(&message)) {
    complete(slot, to_error(slot, *failed));
    if (failed->kind == FailureKind::kOutOfMemory) {
      // The worker exits after its heap limit: no further request may be sent to it.
      w.current.reset();
      retire(w, /*kill=*/false);
      return;
    }
    finish_request(w, failed->collecting);
  }
}

Error Pool::to_error(const Slot& slot, const Failed& failed) const {
  if (failed.kind == FailureKind::kTimeout) return timeout_error(slot.job.timeout);
  json::object data;
  if (failed.kind == FailureKind::kOutOfMemory) {
    data["reason"] = "memory-limit";
    if (config_.permissions.max_memory) data["maxMemory"] = *config_.permissions.max_memory;
    return Error::make(ErrorCode::kHandlerError, "memory limit exceeded", std::move(data));
  }
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"name", &failed.name},
                                   {"stack", &failed.stack},
                                   {"file", &failed.file}}) {
    if (!value->empty()) data[key] = valid_utf8(*value);
  }
  for (const auto& [key, value] :
       {std::pair<const char*, std::uint64_t>{"line", failed.line}, {"column", failed.column}}) {
    if (value > 0) data[key] = static_cast<std::int64_t>(value);
  }
  if (failed.kind == FailureKind::kConfig) {
    if (const auto* call = std::get_if<CallFunction>(&slot.job.request)) {
      data["module"] = call->module;
      data["function"] = call->function;
    }
  }
  std::string message = valid_utf8(failed.message);
  if (message.empty()) message = "the JavaScript function failed";
  return Error::make(failed.kind == FailureKind::kPermission ? ErrorCode::kPermissionDenied
                                                             : ErrorCode::kHandlerError,
                     std::move(message), std::move(data));
}

void Pool::finish_request(Worker& w, bool collecting) {
  if (w.current) {
    // How long this endpoint's requests run: what decides whether others may wait behind one.
    const auto took = Clock::now() - w.current->began;
    if (typical_.size() >= kMaxTypical) typical_.clear();  // labels are endpoints: rarely many
    auto [it, fresh] = typical_.try_emplace(w.current->job.label, took);
    if (!fresh) it->second = (it->second * 3 + took) / 4;
  }
  w.current.reset();
  if (!w.behind.empty()) {
    w.current = std::move(w.behind.front());
    w.behind.pop_front();
  }
  if (w.current) {
    // The worker reads it now: it runs, and may be killed a grace period after its deadline.
    w.current->pipelined = false;
    w.current->began = Clock::now();
    w.current->timer.expires_at(w.current->deadline + kKillGrace);
  } else if (w.state == Worker::State::kBusy) {
    w.state = collecting ? Worker::State::kCollecting : Worker::State::kIdle;
  }
  dispatch_queue();
}

/// Whether a request may be written behind `w`'s current one (dispatch_queue).
bool Pool::may_wait_behind(const Worker& w) const {
  if (w.state != Worker::State::kBusy || !w.current || w.behind.size() >= kMaxBehind) return false;
  if (Clock::now() - w.current->began >= config_.pipeline_below) return false;
  // What the new request would wait for: the current request and those already behind it, each
  // of an endpoint whose requests have been short, all together under pipeline_below.
  Clock::duration wait{};
  auto ahead = [&](const Slot& slot) {
    // A request that may call the host waits for answers the daemon writes to the same input:
    // nothing may be written behind it.
    if (const auto* call = std::get_if<CallFunction>(&slot.job.request);
        call != nullptr && call->host_calls) {
      return false;
    }
    const auto it = typical_.find(slot.job.label);
    if (it == typical_.end()) return false;
    wait += it->second;
    return wait < config_.pipeline_below;
  };
  if (!ahead(*w.current)) return false;
  return std::all_of(w.behind.begin(), w.behind.end(),
                     [&](const auto& slot) { return ahead(*slot); });
}

/// Writes `slot`'s request to worker `w`, as its current request or behind it. A worker that
/// cannot be written to is retired, and the request queued again.
void Pool::send(Worker& w, const std::shared_ptr<Slot>& slot, bool pipelined) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(slot->deadline - Clock::now());
  if (left <= 0ms) {
    complete(*slot, timeout_error(slot->job.timeout, "no JavaScript worker became free"));
    return;
  }
  timeout_of(slot->job.request) = left;
  std::visit(
      [&](auto& r) {
        r.deadline_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(slot->deadline.time_since_epoch())
                .count();
      },
      slot->job.request);
  if (auto* call = std::get_if<CallFunction>(&slot->job.request)) {
    call->busy = pipelined || !queue_.empty();
  }
  const ToWorker request = std::visit([](const auto& r) { return ToWorker(r); }, slot->job.request);
  if (!w.child->write(frame(encode(request)))) {
    queue_.push_front(slot);
    retire(w, /*kill=*/true);
    return;
  }
  slot->running = true;
  slot->pipelined = pipelined;
  if (pipelined) {
    // Its timer stays at the deadline: until the worker reads it, it waits.
    w.behind.push_back(slot);
    ++pipelined_;
  } else {
    w.state = Worker::State::kBusy;
    w.current = slot;
    slot->began = Clock::now();
    // The worker interrupts itself at the deadline; the daemon kills it a grace period later.
    slot->timer.expires_at(slot->deadline + kKillGrace);
  }
}

/// Hands queued requests to workers. On the strand. Idle workers first, then those collecting
/// garbage (a request waits there a few ms at most, and would wait in the queue for a busy
/// worker); then busy workers may be given up to kMaxBehind more, written behind the current
/// request, which the worker reads one after another as it answers (no wake-up of the worker, and
/// no round trip through the daemon, between them; its answers reach the daemon together). Only
/// behind requests of endpoints whose requests have been short, together under pipeline_below, and
/// only while the current one has not run that long itself: a request that turns out slow holds up
/// at most those behind it, whose own deadlines still apply.
void Pool::dispatch_queue() {
  assert(strand_.running_in_this_thread());
  for (const auto state : {Worker::State::kIdle, Worker::State::kCollecting}) {
    for (auto& w : workers_) {
      while (!queue_.empty() && w->state == state) {
        auto slot = std::move(queue_.front());
        queue_.pop_front();
        send(*w, slot, /*pipelined=*/false);
      }
    }
  }
  // One behind each busy worker in turn, so that the requests are spread over the workers.
  for (bool sent = true; sent && !queue_.empty();) {
    sent = false;
    for (auto& w : workers_) {
      if (queue_.empty() || !may_wait_behind(*w)) continue;
      auto slot = std::move(queue_.front());
      queue_.pop_front();
      send(*w, slot, /*pipelined=*/true);
      sent = true;
    }
  }
}

/// Takes a worker out of service (its request, if any, is failed by on_exit or by the caller).
void Pool::retire(Worker& w, bool kill) {
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
  requeue_behind(w);
}

/// The requests written behind the worker's current one never began: other workers take them.
void Pool::requeue_behind(Worker& w) {
  // Back to the queue's front in their order, the oldest first.
  for (auto it = w.behind.rbegin(); it != w.behind.rend(); ++it) {
    auto& slot = *it;
    if (slot->result) continue;  // its time already ran out
    slot->running = false;
    slot->pipelined = false;
    queue_.push_front(std::move(slot));
  }
  w.behind.clear();
}

void Pool::remove_gone() {
  workers_.erase(std::remove_if(workers_.begin(), workers_.end(),
                                [](const auto& w) { return w->state == Worker::State::kGone; }),
                 workers_.end());
}

void Pool::on_exit(const std::shared_ptr<Worker>& w, const proc::RunResult& result) {
  const bool was_starting = w->state == Worker::State::kStarting;
  std::optional<Error> verdict;
  if (w->confinement) verdict = w->confinement->finish(result);
  requeue_behind(*w);  // first: the current request, if it goes back too, goes in front of it
  if (w->current && !w->current->started && !w->current->result && !stopping_) {
    // Died before it began the request: nothing of it ran, another worker takes it.
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
      std::string how = confine::ended_how(result, data);
      data["stderr"] = confine::stderr_excerpt(w->stderr_tail);
      // Memory only on evidence: the jail's OOM verdict (above), an out-of-memory message,
      // or the engine's own crash on a failed allocation. A SIGKILL or SIGTERM without a
      // verdict came from outside hearth and is reported as such.
      const bool signaled = result.status == proc::RunResult::Status::kSignaled;
      const bool from_outside = signaled && (result.signal == SIGKILL || result.signal == SIGTERM);
      const bool engine_oom =
          signaled && !from_outside && w->stderr_tail.find("MOZ_CRASH") != std::string::npos;
      if (from_outside) how += " from outside hearth";
      if (config_.permissions.max_memory &&
          (confine::looks_out_of_memory(w->stderr_tail) || engine_oom)) {
        data["reason"] = "memory-limit";
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
        fail_everything(Error::make(ErrorCode::kHandlerError,
                                    "JavaScript workers for service '" + config_.service +
                                        "' cannot start" +
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

}  // namespace hearth::jsworker
