#pragma once
/// Pool: warm `hearth-js-worker` processes of one service and permission set, started through the
/// jail (confine), each running one request at a time (jsworker/protocol.hpp).
///
/// - start() starts `size` workers; warm() says when one has answered Ready (or starting gave up),
///   stop() kills them for good and fails what waits.
/// - run() queues a request until a worker is free, within its time limit; the worker gets the
///   time left. A busy worker may be given one request behind its current one, when that one is
///   known to be short (dispatch_queue): the worker reads it as soon as it has answered. A worker
///   that dies before it said Started ran nothing of the request, which goes to another; one that
///   dies after fails only its request (-32003, or "memory limit exceeded" when it died of the
///   limit). The worker interrupts itself at the deadline (-32002, the worker stays); if it has not
///   answered a second later it is killed and replaced.
/// - Workers that end are replaced; after kMaxStartFailures failed starts in a row the pool stops
///   trying (what waits fails) until the next request.
///
/// Memory: RLIMIT_AS is maxMemory plus the address space the engine reserves without using it,
/// the memory cgroup gets the engine's baseline on top of maxMemory, and the JS heap is capped at
/// maxMemory inside the worker.
///
/// The queue and the workers are touched only on the pool's strand: run() may be awaited from any
/// executor, and Job callbacks are called on the strand.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/result.hpp"
#include "jail/jail.hpp"
#include "jsworker/protocol.hpp"
#include "permissions/permissions.hpp"

namespace hearth::proc {
struct RunResult;
}

namespace hearth::jsworker {

/// What a pool's workers are made from.
struct PoolConfig {
  std::string service;  ///< names the pool in logs and errors; the workers' ctx.service
  std::filesystem::path service_dir;  ///< the workers' folder (cwd, HOME, modules, data)
  /// What the workers may do: their jail is made from it, and the engine checks it again
  /// (fileAccess, networkAccess, maxMemory).
  permissions::Permissions permissions;
  std::vector<std::string> subscriptions;  ///< what ctx.publish may name
  /// Absolute paths of the code the workers run (modules and what they import): the jail lets
  /// them read these even outside fileAccess.
  std::vector<std::string> code_files;
  std::size_t size = 2;
  std::filesystem::path worker_program;    ///< the hearth-js-worker executable
  std::shared_ptr<const jail::Jail> jail;  ///< null: unconfined (tests, embeddings)
  /// A request may be written behind a worker's current one (pipelined) only when the current
  /// one's endpoint has run shorter than this of late, and the current one has not yet run this
  /// long itself.
  std::chrono::milliseconds pipeline_below{2};
};

/// `hearth-js-worker`: installed, PREFIX/libexec/hearth/; in the build tree, beside the binary
/// (common/installed.hpp).
std::filesystem::path default_worker_program();

/// One request and where its side output goes.
struct Job {
  /// What to run. The pool sets its `id`, and its `timeout` to the time left when a worker
  /// takes it.
  std::variant<CallFunction, EvaluateSource> request;
  std::chrono::milliseconds timeout{30000};  ///< from the moment run() is called
  std::string label;  ///< who the request is for, in the pool's logs (an endpoint's id)
  std::function<void(const Log&)> on_log;          ///< on the pool's strand; empty: dropped
  std::function<void(const Publish&)> on_publish;  ///< on the pool's strand; empty: dropped
  /// A ctx.invoke of the request (CallFunction::host_calls): on the pool's strand; `reply` (any
  /// thread, once) sends the answer, {result} or {error}, to the worker, which waits for it.
  /// Empty: every host call is answered with an error.
  std::function<void(const HostCall&, std::function<void(boost::json::object answer)> reply)>
      on_host_call;
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  /// A worker's own interrupt must have answered this long after the deadline, or it is killed.
  static constexpr std::chrono::milliseconds kKillGrace{1000};
  /// Consecutive failed starts after which a pool stops retrying on its own.
  static constexpr int kMaxStartFailures = 3;

  Pool(const boost::asio::any_io_executor& executor, PoolConfig config);
  ~Pool();

  /// Starts the workers (a warm pool). Any thread.
  void start();

  /// Stops every worker; requests in flight fail ("the daemon is stopping"). Any thread;
  /// idempotent.
  void stop();

  /// A worker has said it is ready (or starting them failed): requests are answered without
  /// waiting for a start. Any thread.
  bool warm() const { return warm_.load() || stopping_; }

  const std::string& service() const { return config_.service; }

  /// How many requests were written behind another on a busy worker (pipelined). Any thread.
  std::uint64_t pipelined() const { return pipelined_.load(); }

  /// Lets workers started from now on read more code files (another endpoint joined the pool).
  void add_code_files(const std::vector<std::string>& files);

  /// Runs `job` on a free worker. The answer, or the error for the caller: the worker's Failed
  /// as an Error (-32003 thrown or config with data {name, stack, file, line, column} and for a
  /// config error {module, function}; -32001 permission; -32002 timeout with data {timeoutMs};
  /// -32003 "memory limit exceeded" with data {maxMemory}), or the pool's own (timeout, crash,
  /// stopping, workers that cannot start).
  boost::asio::awaitable<Result<Returned>> run(Job job);

 private:
  struct Slot;
  struct Worker;

  boost::asio::awaitable<Result<Returned>> run_on_strand(Job job);
  void complete(Slot& slot, Result<Returned> result);
  void fill();
  bool spawn();
  void fail_everything(const Error& error);
  void on_bytes(const std::shared_ptr<Worker>& worker, std::string_view bytes);
  void on_message(Worker& w, FromWorker message);
  Error to_error(const Slot& slot, const Failed& failed) const;
  void finish_request(Worker& w, bool collecting);
  void dispatch_queue();
  void send(Worker& w, const std::shared_ptr<Slot>& slot, bool pipelined);
  bool may_wait_behind(const Worker& w) const;
  void requeue_behind(Worker& w);
  void retire(Worker& w, bool kill);
  void remove_gone();
  void on_exit(const std::shared_ptr<Worker>& w, const proc::RunResult& result);
  Init init_message() const;

  boost::asio::any_io_executor executor_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  PoolConfig config_;
  std::mutex code_mutex_;  ///< guards config_.code_files (added while endpoints are created)
  std::vector<std::shared_ptr<Worker>> workers_;
  std::deque<std::shared_ptr<Slot>> queue_;
  /// How long each endpoint's (Job::label's) requests have run of late: a moving average.
  std::unordered_map<std::string, std::chrono::steady_clock::duration> typical_;
  std::uint64_t next_id_ = 0;
  std::uint64_t next_serial_ = 0;
  int start_failures_ = 0;
  bool broken_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> warm_{false};  ///< a worker was ready once, or starting gave up
  std::atomic<std::uint64_t> pipelined_{0};
};

/// The -32002 error of a request that ran out of time (`why`: in parentheses after the message).
Error timeout_error(std::chrono::milliseconds timeout, const std::string& why = {});

}  // namespace hearth::jsworker
