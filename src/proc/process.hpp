#pragma once
/// Child processes on Asio: started with posix_spawn (through the `hearth-launch` helper, never
/// fork() of the daemon), every pipe read asynchronously, complete only when the child has exited
/// AND its pipes reached EOF, whole process group killed at the time limit.
///
/// Process-wide requirements (the daemon's main() and every test binary must meet them):
/// - SIGPIPE is ignored (signal(SIGPIPE, SIG_IGN)): stdin is written to a pipe whose reader may be
///   gone, and pipes have no MSG_NOSIGNAL; the write then fails with EPIPE, which is expected.
/// - SIGCHLD is NOT set to SIG_IGN and nothing else calls wait()/waitpid(-1): children are reaped
///   here, through their pidfd, and an auto-reaped child would lose its exit status.
/// - Children are spawned from the threads running the io_context, and those threads live as long
///   as the children: the launcher arms PR_SET_PDEATHSIG, which Linux fires when the spawning
///   THREAD exits, not only the process.
///
/// Every child runs in its own session and process group (POSIX_SPAWN_SETSID) with default signal
/// dispositions, an empty signal mask and no inherited descriptor beyond 0, 1, 2 (and 3 for the
/// event pipe). When the main child exits, its group is SIGKILLed at once: background processes a
/// handler left behind do not outlive the call. Pipes are then read to EOF for at most 500 ms (a
/// process that left the group may still hold them), then closed.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace hearth::proc {

/// What to run.
struct Command {
  std::filesystem::path program;          ///< absolute path (see find_program)
  std::vector<std::string> argv;          ///< argv[0] included
  std::vector<std::string> env;           ///< the whole environment, "KEY=VALUE"
  std::filesystem::path cwd;              ///< working directory
  std::optional<std::string> stdin_data;  ///< written then closed; nullopt: stdin reads EOF at once
  bool event_pipe = false;                ///< open fd 3 as a write pipe; its lines go to on_event
  /// Options for the launcher, placed before its `--` (the jail policy: see
  /// jail/launch_options.hpp).
  std::vector<std::string> launcher_options;
  /// A descriptor of the daemon handed to the launcher as fd 4 (the jail's control socket); the
  /// caller keeps ownership. -1: none.
  int control_fd = -1;
};

struct RunLimits {
  std::chrono::milliseconds timeout{30000};
  std::size_t max_stdout = std::size_t{16}
                           << 20;  ///< beyond this the group is killed: kOutputLimit
  std::size_t stderr_tail = 4096;  ///< how much of the end of stderr is kept
  std::size_t max_event_line = std::size_t{1}
                               << 20;  ///< longer event lines are dropped (and logged)
};

struct RunResult {
  enum class Status { kExited, kSignaled, kTimedOut, kOutputLimit, kSpawnFailed };
  Status status = Status::kSpawnFailed;
  int exit_code = -1;       ///< kExited
  int signal = 0;           ///< kSignaled
  std::string out;          ///< everything read from stdout
  std::string err_tail;     ///< the last RunLimits::stderr_tail bytes of stderr
  std::string spawn_error;  ///< kSpawnFailed: why
  std::chrono::microseconds duration{0};
  int pid = -1;  ///< the launcher's pid (reaped by now), -1 when it never started
};

/// Runs `cmd` to completion on the calling coroutine's executor. `on_event` receives each line the
/// child writes to fd 3 (when cmd.event_pipe), as it arrives, without its '\n' (a last line without
/// one is delivered at EOF); calls are never concurrent, and all happen before run() completes.
/// A timeout of zero or less means no time limit. The run ignores cancellation from the awaiting
/// coroutine: its own time limit ends it. Never throws except std::bad_alloc.
boost::asio::awaitable<RunResult> run(Command cmd, RunLimits limits,
                                      std::function<void(std::string_view line)> on_event = {});

/// A child started ahead of its call: a warm jail's launcher, which builds the jail and then waits
/// for the call (jail/control.hpp, "exec") before it starts the program. Destroying it unused
/// kills its group and reaps it.
class Started {
 public:
  ~Started();
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;
  /// The launcher's pid (the child's process group).
  int pid() const;

  struct Impl;

 private:
  explicit Started(std::unique_ptr<Impl> impl);
  friend Result<std::unique_ptr<Started>> start_ahead(const Command& cmd);
  friend boost::asio::awaitable<RunResult> run_started(std::unique_ptr<Started> child,
                                                       std::optional<std::string> stdin_data,
                                                       RunLimits limits,
                                                       std::function<void(std::string_view)>);
  std::unique_ptr<Impl> impl_;
};

/// Spawns `cmd` now, for run_started() later; cmd.stdin_data only says whether stdin is a pipe
/// (what is written to it is given to run_started). Fails (kHandlerError) when it cannot start.
Result<std::unique_ptr<Started>> start_ahead(const Command& cmd);

/// Runs a child started ahead from now on, as run() does: `stdin_data` is written to its stdin
/// pipe (if it has one) and closed, the time limit and the result's duration count from this
/// call.
boost::asio::awaitable<RunResult> run_started(
    std::unique_ptr<Started> child, std::optional<std::string> stdin_data, RunLimits limits,
    std::function<void(std::string_view line)> on_event = {});

/// A long-running child whose stdout is consumed line by line (subscription handlers).
class LineStream {
 public:
  struct Callbacks {
    std::function<void(std::string line)> on_line;  ///< one complete stdout line, without '\n'
    std::function<void(const RunResult&)> on_exit;  ///< once, when the child ended by itself
  };
  /// Destroying the last reference stops the child (as stop() does).
  virtual ~LineStream() = default;
  /// Kills the process group; no callback starts after stop() returns (a callback already running
  /// on another thread is waited for). Safe from any thread and from inside a callback. The child
  /// is reaped asynchronously. Idempotent.
  virtual void stop() = 0;
  /// The launcher's pid (the child's process group), for clean-up of what it leaves behind.
  virtual int pid() const = 0;
};

/// Starts `cmd` (stdin gets cmd.stdin_data, then EOF). Lines longer than max_line are dropped.
/// Callbacks run on a strand of `executor` (never concurrently) and must not throw. on_exit comes
/// after every line, once the child has exited and its pipes reached EOF. cmd.event_pipe is ignored
/// (no fd 3). Fails (kHandlerError) when the child cannot be started.
Result<std::shared_ptr<LineStream>> start_line_stream(const boost::asio::any_io_executor& executor,
                                                      Command cmd, LineStream::Callbacks callbacks,
                                                      std::size_t max_line = std::size_t{1} << 20);

/// A long-lived child the daemon talks to over its stdin and stdout (JS workers, stdio MCP
/// servers): stdin stays open for writes until stop(), stdout arrives as raw chunks.
class Duplex {
 public:
  struct Callbacks {
    std::function<void(std::string_view data)> on_stdout;  ///< bytes as they arrive
    std::function<void(std::string_view data)> on_stderr;  ///< bytes as they arrive (optional)
    std::function<void(const RunResult&)> on_exit;         ///< once, when the child ended
  };
  /// Destroying the last reference stops the child (as stop() does).
  virtual ~Duplex() = default;
  /// Queues `data` for the child's stdin; written in order. False once stdin is closed (the child
  /// exited or stop() was called). Safe from any thread.
  virtual bool write(std::string data) = 0;
  /// Kills the process group; no callback starts after stop() returns (one already running on
  /// another thread is waited for). Safe from any thread and from inside a callback. Idempotent.
  virtual void stop() = 0;
  /// The launcher's pid (the child's process group).
  virtual int pid() const = 0;
};

/// Starts `cmd` with a stdin pipe kept open (cmd.stdin_data and cmd.event_pipe are ignored).
/// Callbacks run on a strand of `executor`, never concurrently, and must not throw; on_exit comes
/// last, once the child has exited and its pipes reached EOF.
Result<std::shared_ptr<Duplex>> start_duplex(const boost::asio::any_io_executor& executor,
                                             Command cmd, Duplex::Callbacks callbacks);

/// Duplex callbacks that hand a child's output to its owner, both held weakly (either may be gone
/// by then: the callback then does nothing): stdout to `(owner->*on_stdout)(child, data)`, the
/// end to `(owner->*on_exit)(child, result)`, and stderr kept in `child->*stderr_tail` (its
/// last `keep` bytes at least, at most twice that). For owners that run the child with
/// start_duplex_on on their own strand, so that the members are called there.
template <class Owner, class Child>
Duplex::Callbacks callbacks_for(
    const std::shared_ptr<Owner>& owner, const std::shared_ptr<Child>& child,
    void (Owner::*on_stdout)(const std::shared_ptr<Child>&, std::string_view),
    void (Owner::*on_exit)(const std::shared_ptr<Child>&, const RunResult&),
    std::string Child::*stderr_tail, std::size_t keep) {
  std::weak_ptr<Owner> weak_owner = owner;
  std::weak_ptr<Child> weak_child = child;
  Duplex::Callbacks callbacks;
  callbacks.on_stdout = [weak_owner, weak_child, on_stdout](std::string_view data) {
    auto o = weak_owner.lock();
    auto c = weak_child.lock();
    if (o && c) ((*o).*on_stdout)(c, data);
  };
  callbacks.on_stderr = [weak_child, stderr_tail, keep](std::string_view data) {
    if (auto c = weak_child.lock()) {
      std::string& tail = (*c).*stderr_tail;
      tail += data;
      if (tail.size() > 2 * keep) tail.erase(0, tail.size() - keep);
    }
  };
  callbacks.on_exit = [weak_owner, weak_child, on_exit](const RunResult& result) {
    auto o = weak_owner.lock();
    auto c = weak_child.lock();
    if (o && c) ((*o).*on_exit)(c, result);
  };
  return callbacks;
}

/// start_duplex with the callbacks on `strand` itself, the caller's own: a caller that keeps its
/// state on that strand handles the child's output in the callback, without a copy and a hop.
/// A callback may call stop() of any Duplex on the same strand.
Result<std::shared_ptr<Duplex>> start_duplex_on(
    const boost::asio::strand<boost::asio::any_io_executor>& strand, Command cmd,
    Duplex::Callbacks callbacks);

/// Resolves a command name the way execvp would, using `path_env` (a PATH value) instead of the
/// daemon's own PATH; a name containing '/' is taken relative to `cwd`. nullopt if not found or
/// not executable.
std::optional<std::filesystem::path> find_program(std::string_view name, std::string_view path_env,
                                                  const std::filesystem::path& cwd);

/// The launcher used for every child (default: `hearth-launch` beside the running executable).
/// Set it at start-up, before any child runs; a relative path is made absolute.
void set_launcher(const std::filesystem::path& launcher);
const std::filesystem::path& launcher();

/// Kills the process group of every child still running (daemon shutdown). Thread-safe.
void kill_all();

/// How many children are running now (for tests and diagnostics).
std::size_t running_count();

}  // namespace hearth::proc
