#include "proc/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <csignal>
#include <deque>
#include <mutex>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "common/fd.hpp"
#include "common/installed.hpp"

namespace hearth::proc {

namespace asio = boost::asio;

namespace {

using namespace std::chrono_literals;
using Strand = asio::strand<asio::any_io_executor>;
using Descriptor = asio::posix::stream_descriptor;

/// How long pipes are still read after the main child exited (and its group was killed): only a
/// process that left the group can still hold them, and it must not hold the call.
constexpr auto kDrainWindow = 500ms;
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
/// Pipe fds are kept at or above this number, so that no dup2() onto 0..3 in the child can
/// clobber a descriptor a later dup2() still needs (a daemon started with fd 0 closed would get
/// pipe ends numbered 0).
constexpr int kLowestPipeFd = 4;

std::string errno_text(int error) {
  return std::generic_category().message(error);
}

/// glibc 2.36's <sys/pidfd.h> declares pidfd_open without extern "C" (fixed in 2.37), so C++
/// cannot link against it: call the system call itself.
int open_pidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

/// Creates a close-on-exec pipe with both ends at or above kLowestPipeFd. Returns 0 or an errno.
int make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  for (Fd* end : {&read_end, &write_end}) {
    if (end->get() >= kLowestPipeFd) continue;
    const int moved = ::fcntl(end->get(), F_DUPFD_CLOEXEC, kLowestPipeFd);
    if (moved < 0) return errno;
    end->reset(moved);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Registry of running children (for kill_all and running_count).

/// Process group ids of the children not yet reaped. A child is its group's leader (setsid), so
/// its pid is the group id; while it is unreaped (a zombie at worst) that number cannot be reused,
/// which is what makes kill(-pgid) safe. Entries are removed under the mutex before the reap.
struct ChildRegistry {
  std::mutex mutex;
  std::unordered_set<pid_t> groups;
};

ChildRegistry& registry() {
  // Never destroyed: children may be reaped by io threads during static destruction.
  static auto* instance = new ChildRegistry;
  return *instance;
}

struct LauncherConfig {
  std::mutex mutex;
  std::filesystem::path path;
};

LauncherConfig& launcher_config() {
  static auto* instance = new LauncherConfig;
  return *instance;
}

/// Installed: PREFIX/libexec/hearth/hearth-launch; in the build tree: beside the binary.
std::filesystem::path default_launcher() {
  return installed::helper("hearth-launch", installed::self_exe());
}

std::filesystem::path current_launcher() {
  auto& config = launcher_config();
  std::lock_guard lock(config.mutex);
  if (config.path.empty()) config.path = default_launcher();
  return config.path;
}

// ---------------------------------------------------------------------------------------------
// Spawning.

/// A started child: its pid (== process group id), pidfd and the parent's ends of its pipes.
struct Child {
  pid_t pid = -1;
  Fd pidfd;
  Fd stdin_w;
  Fd stdout_r;
  Fd stderr_r;
  Fd events_r;
};

struct FileActions {
  posix_spawn_file_actions_t value{};
  FileActions() { posix_spawn_file_actions_init(&value); }
  ~FileActions() { posix_spawn_file_actions_destroy(&value); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
};

struct SpawnAttr {
  posix_spawnattr_t value{};
  SpawnAttr() { posix_spawnattr_init(&value); }
  ~SpawnAttr() { posix_spawnattr_destroy(&value); }
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
};

/// Kills the group of a child that is not reaped yet (so its pid and group id are still ours),
/// forgets it in the registry and reaps it. The wait after SIGKILL is short.
void kill_and_reap(pid_t pid) {
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mutex);
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);  // also the leader, in case it moved itself to another group
    reg.groups.erase(pid);
  }
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

Result<Child> spawn_child(const Command& cmd) {
  auto fail = [](std::string message) {
    return Error::make(ErrorCode::kHandlerError, std::move(message));
  };
  if (cmd.argv.empty()) return fail("cannot start a process without argv[0]");

  Child child;
  Fd stdin_r, stdout_w, stderr_w, events_w;
  if (cmd.stdin_data) {
    if (int e = make_pipe(stdin_r, child.stdin_w)) {
      return fail("cannot create a pipe: " + errno_text(e));
    }
  }
  if (int e = make_pipe(child.stdout_r, stdout_w)) {
    return fail("cannot create a pipe: " + errno_text(e));
  }
  if (int e = make_pipe(child.stderr_r, stderr_w)) {
    return fail("cannot create a pipe: " + errno_text(e));
  }
  if (cmd.event_pipe) {
    if (int e = make_pipe(child.events_r, events_w)) {
      return fail("cannot create a pipe: " + errno_text(e));
    }
  }

  FileActions actions;
  int rc = 0;
  auto check = [&rc](int result) {
    if (rc == 0) rc = result;
  };
  // dup2 clears close-on-exec on the copies; every other descriptor of the daemon (Asio sockets
  // are not close-on-exec) is closed by closefrom, so nothing leaks into handlers.
  if (cmd.stdin_data) {
    check(posix_spawn_file_actions_adddup2(&actions.value, stdin_r.get(), 0));
  } else {
    check(posix_spawn_file_actions_addopen(&actions.value, 0, "/dev/null", O_RDONLY, 0));
  }
  check(posix_spawn_file_actions_adddup2(&actions.value, stdout_w.get(), 1));
  check(posix_spawn_file_actions_adddup2(&actions.value, stderr_w.get(), 2));
  if (cmd.event_pipe) check(posix_spawn_file_actions_adddup2(&actions.value, events_w.get(), 3));
  if (cmd.control_fd >= 0) {
    // fd 3 must not be whatever the daemon has there when there is no event pipe.
    if (!cmd.event_pipe) {
      check(posix_spawn_file_actions_addopen(&actions.value, 3, "/dev/null", O_RDONLY, 0));
    }
    check(posix_spawn_file_actions_adddup2(&actions.value, cmd.control_fd, 4));
  }
  if (!cmd.cwd.empty()) {
    check(posix_spawn_file_actions_addchdir_np(&actions.value, cmd.cwd.c_str()));
  }
  check(posix_spawn_file_actions_addclosefrom_np(
      &actions.value, cmd.control_fd >= 0 ? 5 : (cmd.event_pipe ? 4 : 3)));

  SpawnAttr attr;
  // New session: kill(-pid) reaches every process the handler starts, and the handler has no
  // controlling terminal (TIOCSTI cannot inject into the daemon's). Signals: the daemon's mask and
  // its SIG_IGN dispositions (SIGPIPE) must not be inherited.
  check(posix_spawnattr_setflags(
      &attr.value, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
  sigset_t mask;
  sigemptyset(&mask);
  check(posix_spawnattr_setsigmask(&attr.value, &mask));
  sigset_t defaults;
  sigfillset(&defaults);
  check(posix_spawnattr_setsigdefault(&attr.value, &defaults));
  if (rc != 0) return fail("cannot prepare posix_spawn: " + errno_text(rc));

  const std::filesystem::path launcher_path = current_launcher();
  std::vector<std::string> args;
  args.reserve(cmd.argv.size() + 4);
  args.push_back(launcher_path.string());
  args.push_back("--parent=" + std::to_string(::getpid()));
  args.insert(args.end(), cmd.launcher_options.begin(), cmd.launcher_options.end());
  args.emplace_back("--");
  args.push_back(cmd.program.string());
  args.insert(args.end(), cmd.argv.begin(), cmd.argv.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_copy = cmd.env;
  std::vector<char*> envp;
  envp.reserve(env_copy.size() + 1);
  for (auto& e : env_copy) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  rc = ::posix_spawn(&pid, launcher_path.c_str(), &actions.value, &attr.value, argv.data(),
                     envp.data());
  if (rc != 0) {
    std::string why = "cannot start " + launcher_path.string();
    if (!cmd.cwd.empty()) why += " in " + cmd.cwd.string();
    return fail(why + ": " + errno_text(rc));
  }
  child.pid = pid;
  // The child's ends close here (scope exit of the locals) - our copies must go, or EOF never
  // comes.

  child.pidfd.reset(open_pidfd(pid));
  if (!child.pidfd.valid()) {
    const int e = errno;
    kill_and_reap(pid);
    return fail("cannot watch the child process (pidfd_open): " + errno_text(e));
  }
  {
    auto& reg = registry();
    std::lock_guard lock(reg.mutex);
    reg.groups.insert(pid);
  }
  return child;
}

// ---------------------------------------------------------------------------------------------
// Splitting a byte stream into lines.

class LineSplitter {
 public:
  LineSplitter(std::size_t max_line, const char* what) : max_line_(max_line), what_(what) {}

  /// Calls emit(std::string line) for each complete line in `chunk`.
  template <class Emit>
  void feed(std::string_view chunk, Emit&& emit) {
    while (!chunk.empty()) {
      const auto newline = chunk.find('\n');
      append(chunk.substr(0, newline));
      if (newline == std::string_view::npos) return;
      chunk.remove_prefix(newline + 1);
      if (!overflow_) emit(std::move(partial_));
      partial_.clear();
      overflow_ = false;
    }
  }

  /// End of stream: the last line, if it had no '\n'.
  template <class Emit>
  void finish(Emit&& emit) {
    if (!overflow_ && !partial_.empty()) emit(std::move(partial_));
    partial_.clear();
    overflow_ = false;
  }

 private:
  void append(std::string_view piece) {
    if (overflow_) return;
    if (partial_.size() + piece.size() > max_line_) {
      spdlog::warn("dropping a {} line longer than {} bytes", what_, max_line_);
      overflow_ = true;
      partial_.clear();
      return;
    }
    partial_.append(piece);
  }

  std::size_t max_line_;
  const char* what_;
  std::string partial_;
  bool overflow_ = false;  ///< the current line is too long: skip to the next '\n'
};

// ---------------------------------------------------------------------------------------------
// One running child, driven on a strand.

/// Owns a spawned child from start to reap. Everything runs on `strand`. The owner keeps the
/// Session alive until drive() completes; if it is destroyed earlier (io_context torn down with
/// the run pending) the destructor kills and reaps the child.
class Session {
 public:
  Session(const Strand& strand, Child child, std::chrono::milliseconds timeout,
          std::size_t stderr_tail, std::optional<std::string> stdin_data)
      : pid_(child.pid),
        pidfd_(strand),
        stdin_(strand),
        stdout_(strand),
        stderr_(strand),
        events_(strand),
        watchdog_(strand),
        drain_timer_(strand),
        timeout_(timeout),
        stderr_tail_(stderr_tail),
        stdin_data_(std::move(stdin_data)) {
    attach(pidfd_, child.pidfd);
    attach(stdin_, child.stdin_w);
    attach(stdout_, child.stdout_r);
    attach(stderr_, child.stderr_r);
    attach(events_, child.events_r);
    if (!attach_error_.empty()) {
      spdlog::error("cannot watch child {}: {}", pid_, attach_error_);
      terminate(RunResult::Status::kSpawnFailed);
      close_pipes();
    }
    // Counted once here: a pipe closed before its reader starts (stop() right after the start)
    // must still count as finished, or the drain window would be waited for nothing.
    for (Pipe which : {Pipe::kStdout, Pipe::kStderr, Pipe::kEvents}) {
      counted_[index(which)] = pipe(which).is_open();
      open_pipes_ += counted_[index(which)] ? 1 : 0;
    }
  }

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  ~Session() {
    if (reaped_) return;
    // Abandoned before the child was reaped (the io_context was destroyed with the run pending):
    // kill it and reap it here; it only happens at teardown.
    kill_and_reap(pid_);
  }

  /// Receives stdout bytes as they arrive; may call close_stdout().
  std::function<void(std::string_view)> on_stdout;
  /// Receives stderr bytes as they arrive (besides the kept tail).
  std::function<void(std::string_view)> on_stderr;
  /// Receives event-pipe bytes as they arrive.
  std::function<void(std::string_view)> on_events;
  std::function<void()> on_events_end;

  /// Runs until the child is reaped and every pipe is at EOF (or was closed after the drain
  /// window).
  asio::awaitable<void> drive() {
    using namespace asio::experimental::awaitable_operators;
    co_await (wait_exit() && watchdog() && read_pipe(Pipe::kStdout) && read_pipe(Pipe::kStderr) &&
              read_pipe(Pipe::kEvents) && write_stdin());
  }

  /// Kills the group now. The first reason given decides the result's status.
  void terminate(std::optional<RunResult::Status> reason) {
    if (reason && !forced_) forced_ = reason;
    if (reaped_) return;
    ::kill(-pid_, SIGKILL);
    // Also the leader itself, in case the handler moved itself to another group.
    ::kill(pid_, SIGKILL);
  }

  /// Stops reading and writing every pipe (pending operations end with operation_aborted).
  void close_pipes() {
    boost::system::error_code ignored;
    stdin_.close(ignored);
    stdout_.close(ignored);
    stderr_.close(ignored);
    events_.close(ignored);
  }

  void close_stdout() {
    boost::system::error_code ignored;
    stdout_.close(ignored);
  }

  pid_t pid() const { return pid_; }

  /// Status, exit code or signal, stderr tail. Valid once drive() completed.
  RunResult result() const {
    RunResult r;
    r.pid = pid_;
    if (!attach_error_.empty()) {
      r.status = RunResult::Status::kSpawnFailed;
      r.spawn_error = "cannot watch the child process: " + attach_error_;
    } else if (exit_code_ >= 0) {
      r.status = RunResult::Status::kExited;
      r.exit_code = exit_code_;
    } else {
      r.status = RunResult::Status::kSignaled;
      r.signal = signal_;
    }
    if (forced_ && *forced_ != RunResult::Status::kSpawnFailed) r.status = *forced_;
    r.err_tail = err_tail_.size() > stderr_tail_ ? err_tail_.substr(err_tail_.size() - stderr_tail_)
                                                 : err_tail_;
    return r;
  }

 private:
  enum class Pipe { kStdout, kStderr, kEvents };
  static std::size_t index(Pipe which) { return static_cast<std::size_t>(which); }
  Descriptor& pipe(Pipe which) {
    switch (which) {
      case Pipe::kStdout:
        return stdout_;
      case Pipe::kStderr:
        return stderr_;
      case Pipe::kEvents:
        return events_;
    }
    return stdout_;
  }

  void attach(Descriptor& descriptor, Fd& fd) {
    if (!fd.valid()) return;
    boost::system::error_code ec;
    descriptor.assign(fd.get(), ec);
    if (ec) {
      if (attach_error_.empty()) attach_error_ = ec.message();
      return;  // fd stays owned by `fd` and is closed with it
    }
    fd.release();
  }

  asio::awaitable<void> wait_exit() {
    for (;;) {
      auto [ec] =
          co_await pidfd_.async_wait(Descriptor::wait_read, asio::as_tuple(asio::use_awaitable));
      if (ec || !pidfd_.is_open()) {
        // Nothing cancels this wait; if the reactor fails anyway, fall back to a blocking reap
        // after SIGKILL rather than leaving a zombie.
        spdlog::error("waiting for child {} failed: {}", pid_, ec.message());
        terminate(std::nullopt);
        reap(true);
        break;
      }
      if (reap(false)) break;
    }
    exited_ = true;
    watchdog_.cancel();
    if (open_pipes_ > 0) {
      drain_timer_.expires_after(kDrainWindow);
      co_await drain_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    close_pipes();
  }

  /// True when the main child has exited and waits to be reaped (peeks with WNOWAIT).
  bool exited_unreaped() {
    siginfo_t info{};
    int rc;
    do {
      const int flags = WEXITED | WNOHANG | WNOWAIT;
      rc = pidfd_.is_open()
               ? ::waitid(P_PIDFD, static_cast<id_t>(pidfd_.native_handle()), &info, flags)
               : ::waitid(P_PID, static_cast<id_t>(pid_), &info, flags);
    } while (rc < 0 && errno == EINTR);
    // An error (ECHILD) is left to reap(), which reports it.
    return rc < 0 || info.si_pid != 0;
  }

  /// Kills the rest of the group and reaps the main child. Returns false when it has not exited
  /// yet (blocking = false only).
  bool reap(bool blocking) {
    auto& reg = registry();
    siginfo_t info{};
    if (!blocking && !exited_unreaped()) {
      // A readiness wake-up is not proof of exit (the reactor may wake spuriously under load):
      // never kill the group of a child that is still running.
      return false;
    }
    {
      std::lock_guard lock(reg.mutex);
      // The unreaped leader keeps the group id ours: leftovers die before it can be reused.
      ::kill(-pid_, SIGKILL);
      int rc;
      do {
        const int flags = WEXITED | (blocking ? 0 : WNOHANG);
        rc = pidfd_.is_open()
                 ? ::waitid(P_PIDFD, static_cast<id_t>(pidfd_.native_handle()), &info, flags)
                 : ::waitid(P_PID, static_cast<id_t>(pid_), &info, flags);
      } while (rc < 0 && errno == EINTR);
      if (rc < 0) {
        // ECHILD: reaped by someone else (SIGCHLD set to SIG_IGN, or a stray wait(-1)).
        spdlog::warn("child {} was reaped elsewhere ({}); its exit status is lost", pid_,
                     errno_text(errno));
        exit_code_ = -1;
        signal_ = 0;
        reg.groups.erase(pid_);
        reaped_ = true;
        return true;
      }
      if (info.si_pid == 0) return false;
      reg.groups.erase(pid_);
    }
    reaped_ = true;
    if (info.si_code == CLD_EXITED) {
      exit_code_ = info.si_status;
    } else {
      exit_code_ = -1;
      signal_ = info.si_status;
    }
    return true;
  }

  asio::awaitable<void> watchdog() {
    if (timeout_ <= std::chrono::milliseconds::zero() || exited_) co_return;
    watchdog_.expires_after(timeout_);
    auto [ec] = co_await watchdog_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!ec && !exited_) terminate(RunResult::Status::kTimedOut);
  }

  asio::awaitable<void> read_pipe(Pipe which) {
    if (!counted_[index(which)]) co_return;
    Descriptor& fd = pipe(which);
    std::vector<char> buffer(which == Pipe::kStdout ? kReadChunk : kReadChunk / 4);
    while (fd.is_open()) {
      auto [ec, n] =
          co_await fd.async_read_some(asio::buffer(buffer), asio::as_tuple(asio::use_awaitable));
      if (n > 0) deliver(which, std::string_view(buffer.data(), n));
      if (ec) break;
    }
    boost::system::error_code ignored;
    fd.close(ignored);
    if (which == Pipe::kEvents && on_events_end) on_events_end();
    if (--open_pipes_ == 0 && exited_) drain_timer_.cancel();
  }

  void deliver(Pipe which, std::string_view data) {
    switch (which) {
      case Pipe::kStdout:
        if (on_stdout) on_stdout(data);
        break;
      case Pipe::kStderr:
        if (on_stderr) on_stderr(data);
        err_tail_.append(data);
        // Trim in batches: keeps appends amortised O(1) for a chatty stderr.
        if (err_tail_.size() > 2 * stderr_tail_ + kReadChunk) {
          err_tail_.erase(0, err_tail_.size() - stderr_tail_);
        }
        break;
      case Pipe::kEvents:
        if (on_events) on_events(data);
        break;
    }
  }

  asio::awaitable<void> write_stdin() {
    if (!stdin_.is_open()) co_return;
    if (stdin_data_ && !stdin_data_->empty()) {
      // EPIPE (the child does not read its stdin) or operation_aborted (closed after exit) are
      // normal ends, not errors.
      co_await asio::async_write(stdin_, asio::buffer(*stdin_data_),
                                 asio::as_tuple(asio::use_awaitable));
    }
    boost::system::error_code ignored;
    stdin_.close(ignored);
  }

  pid_t pid_;
  Descriptor pidfd_;
  Descriptor stdin_;
  Descriptor stdout_;
  Descriptor stderr_;
  Descriptor events_;
  asio::steady_timer watchdog_;
  asio::steady_timer drain_timer_;
  std::chrono::milliseconds timeout_;
  std::size_t stderr_tail_;
  std::optional<std::string> stdin_data_;
  std::string err_tail_;
  std::string attach_error_;
  std::array<bool, 3> counted_{};  ///< by Pipe: open at the start, so its reader will count down
  int open_pipes_ = 0;             ///< counted pipes whose reader has not finished
  bool exited_ = false;
  bool reaped_ = false;
  int exit_code_ = -1;
  int signal_ = 0;
  std::optional<RunResult::Status> forced_;
};

/// Drives a spawned child to its end (run() and run_started()).
asio::awaitable<RunResult> drive_child(Strand strand, Child child,
                                       std::optional<std::string> stdin_data, RunLimits limits,
                                       std::function<void(std::string_view)> on_event,
                                       std::chrono::steady_clock::time_point started) {
  auto elapsed = [&started] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 started);
  };
  Session session(strand, std::move(child), limits.timeout, limits.stderr_tail,
                  std::move(stdin_data));
  std::string out;
  session.on_stdout = [&](std::string_view data) {
    if (out.size() + data.size() > limits.max_stdout) {
      out.append(data.substr(0, limits.max_stdout - out.size()));
      session.terminate(RunResult::Status::kOutputLimit);
      session.close_stdout();
      return;
    }
    out.append(data);
  };
  LineSplitter events(limits.max_event_line, "event");
  auto emit_event = [&on_event](const std::string& line) {
    if (on_event) on_event(line);
  };
  session.on_events = [&](std::string_view data) { events.feed(data, emit_event); };
  session.on_events_end = [&] { events.finish(emit_event); };

  co_await session.drive();

  RunResult result = session.result();
  result.out = std::move(out);
  result.duration = elapsed();
  co_return result;
}

asio::awaitable<RunResult> run_on_strand(Strand strand, Command cmd, RunLimits limits,
                                         std::function<void(std::string_view)> on_event) {
  const auto started = std::chrono::steady_clock::now();
  auto child = spawn_child(cmd);
  if (!child) {
    RunResult failed;
    failed.status = RunResult::Status::kSpawnFailed;
    failed.spawn_error = child.error().message;
    failed.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started);
    co_return failed;
  }
  co_return co_await drive_child(strand, std::move(*child), std::move(cmd.stdin_data), limits,
                                 std::move(on_event), started);
}

// ---------------------------------------------------------------------------------------------
// Duplex.

class DuplexState : public std::enable_shared_from_this<DuplexState> {
 public:
  DuplexState(const Strand& strand, Child child, Duplex::Callbacks callbacks)
      : strand_(strand), stdin_(strand), callbacks_(std::move(callbacks)) {
    Fd stdin_w = std::move(child.stdin_w);
    session_.emplace(strand, std::move(child), std::chrono::milliseconds::zero(),
                     RunLimits{}.stderr_tail, std::nullopt);
    boost::system::error_code ec;
    stdin_.assign(stdin_w.get(), ec);
    if (!ec) {
      stdin_w.release();
      stdin_.non_blocking(true, ec);  // write() tries the pipe at once from any thread
    }
  }

  void start() {
    session_->on_stdout = [this](std::string_view data) {
      guarded([&] {
        if (callbacks_.on_stdout) callbacks_.on_stdout(data);
      });
    };
    session_->on_stderr = [this](std::string_view data) {
      guarded([&] {
        if (callbacks_.on_stderr) callbacks_.on_stderr(data);
      });
    };
    asio::co_spawn(
        strand_,
        [self = shared_from_this()]() -> asio::awaitable<void> {
          co_await self->session_->drive();
          {
            // Under the queue's lock: write() may be trying the pipe from another thread.
            std::lock_guard lock(self->queue_mutex_);
            self->stdin_closed_ = true;
            self->queue_.clear();
            boost::system::error_code ignored;
            self->stdin_.close(ignored);
          }
          const RunResult result = self->session_->result();
          self->guarded([&] {
            if (self->callbacks_.on_exit) self->callbacks_.on_exit(result);
          });
        },
        asio::detached);
  }

  int pid() const { return session_->pid(); }

  bool write(std::string data) {
    {
      std::lock_guard lock(queue_mutex_);
      if (stdin_closed_) return false;
      if (!writing_ && stdin_.is_open()) {
        // Nothing in flight: try the pipe now (non-blocking, one syscall), so that a request
        // that fits - the usual case - costs no hop to the strand and back.
        const int fd = stdin_.native_handle();
        std::size_t written = 0;
        while (written < data.size()) {
          const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
          if (n > 0) {
            written += static_cast<std::size_t>(n);
          } else if (n < 0 && errno == EINTR) {
            continue;
          } else {
            break;  // EAGAIN (pipe full) or EPIPE (child gone): the strand takes over
          }
        }
        if (written == data.size()) return true;
        data.erase(0, written);
      }
      queue_.push_back(std::move(data));
      if (writing_) return true;
      writing_ = true;
    }
    asio::post(strand_, [self = shared_from_this()] { self->write_next(); });
    return true;
  }

  /// Closes stdin once everything queued so far is written (the child then reads EOF).
  void close_stdin() {
    {
      std::lock_guard lock(queue_mutex_);
      if (stdin_closed_) return;
      close_when_drained_ = true;
      if (writing_) return;  // write_next closes it after the last chunk
      writing_ = true;
    }
    asio::post(strand_, [self = shared_from_this()] { self->write_next(); });
  }

  void stop() {
    if (strand_.running_in_this_thread()) {
      // From a callback (which holds callback_mutex_) or another handler on the strand: no
      // callback can be running concurrently.
      stopped_ = true;
    } else {
      std::lock_guard lock(callback_mutex_);
      stopped_ = true;
    }
    {
      std::lock_guard lock(queue_mutex_);
      stdin_closed_ = true;
      queue_.clear();
    }
    if (stop_posted_.exchange(true)) return;
    asio::post(strand_, [self = shared_from_this()] {
      {
        std::lock_guard lock(self->queue_mutex_);
        boost::system::error_code ignored;
        self->stdin_.close(ignored);
      }
      self->session_->terminate(std::nullopt);
      self->session_->close_pipes();
    });
  }

 private:
  /// On the strand: writes the queued chunks one after the other.
  void write_next() {
    std::string chunk;
    {
      std::lock_guard lock(queue_mutex_);
      if (queue_.empty() && close_when_drained_ && !stdin_closed_) {
        stdin_closed_ = true;
        writing_ = false;
        boost::system::error_code ignored;
        stdin_.close(ignored);
        return;
      }
      if (queue_.empty() || stdin_closed_ || !stdin_.is_open()) {
        writing_ = false;
        return;
      }
      chunk = std::move(queue_.front());
      queue_.pop_front();
    }
    auto buffer = std::make_shared<std::string>(std::move(chunk));
    asio::async_write(
        stdin_, asio::buffer(*buffer),
        asio::bind_executor(strand_, [self = shared_from_this(), buffer](
                                         const boost::system::error_code& ec, std::size_t) {
          if (ec) {
            // EPIPE: the child is gone; its exit is reported by the session.
            std::lock_guard lock(self->queue_mutex_);
            self->stdin_closed_ = true;
            self->queue_.clear();
            self->writing_ = false;
            return;
          }
          self->write_next();
        }));
  }

  template <class F>
  void guarded(F&& f) {
    std::lock_guard lock(callback_mutex_);
    if (stopped_) return;
    f();
  }

  Strand strand_;
  std::optional<Session> session_;
  Descriptor stdin_;
  Duplex::Callbacks callbacks_;
  std::mutex callback_mutex_;
  bool stopped_ = false;
  std::atomic<bool> stop_posted_{false};
  std::mutex queue_mutex_;  ///< guards the write queue and its flags
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool stdin_closed_ = false;
  bool close_when_drained_ = false;
};

class DuplexHandle final : public Duplex {
 public:
  explicit DuplexHandle(std::shared_ptr<DuplexState> state) : state_(std::move(state)) {}
  ~DuplexHandle() override { state_->stop(); }
  DuplexHandle(const DuplexHandle&) = delete;
  DuplexHandle& operator=(const DuplexHandle&) = delete;
  bool write(std::string data) override { return state_->write(std::move(data)); }
  void stop() override { state_->stop(); }
  int pid() const override { return state_->pid(); }

 private:
  std::shared_ptr<DuplexState> state_;
};

bool is_executable_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return ::access(path.c_str(), X_OK) == 0;
}

std::filesystem::path make_absolute(const std::filesystem::path& path) {
  if (path.is_absolute()) return path.lexically_normal();
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal();
}

}  // namespace

asio::awaitable<RunResult> run(Command cmd, RunLimits limits,
                               std::function<void(std::string_view line)> on_event) {
  auto executor = co_await asio::this_coro::executor;
  auto strand = asio::make_strand(executor);
  // The empty slot detaches the run from the caller's cancellation: a half-cancelled run could not
  // reap its child. Its own timeout ends it.
  co_return co_await asio::co_spawn(
      strand, run_on_strand(strand, std::move(cmd), limits, std::move(on_event)),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
}

struct Started::Impl {
  Child child;
  bool stdin_pipe = false;
};

Started::Started(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Started::~Started() {
  if (!impl_ || impl_->child.pid <= 0) return;
  kill_and_reap(impl_->child.pid);  // dropped unused
}

int Started::pid() const {
  return impl_ ? impl_->child.pid : -1;
}

Result<std::unique_ptr<Started>> start_ahead(const Command& cmd) {
  auto child = spawn_child(cmd);
  if (!child) return std::move(child).error();
  auto impl = std::make_unique<Started::Impl>();
  impl->child = std::move(*child);
  impl->stdin_pipe = cmd.stdin_data.has_value();
  return std::unique_ptr<Started>(new Started(std::move(impl)));
}

asio::awaitable<RunResult> run_started(std::unique_ptr<Started> child,
                                       std::optional<std::string> stdin_data, RunLimits limits,
                                       std::function<void(std::string_view line)> on_event) {
  const auto started = std::chrono::steady_clock::now();
  Child taken = std::move(child->impl_->child);
  const bool stdin_pipe = child->impl_->stdin_pipe;
  child->impl_->child.pid = -1;  // the session owns it now
  if (!stdin_pipe) stdin_data.reset();
  if (stdin_pipe && !stdin_data) stdin_data.emplace();  // EOF at once
  auto executor = co_await asio::this_coro::executor;
  auto strand = asio::make_strand(executor);
  co_return co_await asio::co_spawn(
      strand,
      drive_child(strand, std::move(taken), std::move(stdin_data), limits, std::move(on_event),
                  started),
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
}

Result<std::shared_ptr<DuplexState>> start_duplex_state(const Strand& strand, Command cmd,
                                                        Duplex::Callbacks callbacks) {
  cmd.event_pipe = false;
  cmd.stdin_data = std::string();  // asks spawn_child for a stdin pipe; DuplexState owns it
  auto child = spawn_child(cmd);
  if (!child) return std::move(child).error();
  auto state = std::make_shared<DuplexState>(strand, std::move(*child), std::move(callbacks));
  state->start();
  return state;
}

Result<std::shared_ptr<DuplexState>> start_duplex_state(const asio::any_io_executor& executor,
                                                        Command cmd, Duplex::Callbacks callbacks) {
  return start_duplex_state(asio::make_strand(executor), std::move(cmd), std::move(callbacks));
}

Result<std::shared_ptr<LineStream>> start_line_stream(const asio::any_io_executor& executor,
                                                      Command cmd, LineStream::Callbacks callbacks,
                                                      std::size_t max_line) {
  // A duplex child whose stdin gets stdin_data then EOF, and whose stdout is split into lines.
  // Duplex callbacks are serialised and silenced by stop(); the flag also stops the lines still
  // to come from a chunk when on_line itself calls stop().
  struct Lines {
    Lines(LineStream::Callbacks c, std::size_t max)
        : callbacks(std::move(c)), splitter(max, "stdout") {}
    LineStream::Callbacks callbacks;
    LineSplitter splitter;
    std::atomic<bool> stopped{false};
    void emit(std::string line) {
      if (!stopped && callbacks.on_line) callbacks.on_line(std::move(line));
    }
  };
  auto lines = std::make_shared<Lines>(std::move(callbacks), max_line);
  auto stdin_data = std::move(cmd.stdin_data);
  Duplex::Callbacks duplex;
  duplex.on_stdout = [lines](std::string_view data) {
    lines->splitter.feed(data, [&lines](std::string line) { lines->emit(std::move(line)); });
  };
  duplex.on_exit = [lines](const RunResult& result) {
    lines->splitter.finish([&lines](std::string line) { lines->emit(std::move(line)); });
    if (!lines->stopped && lines->callbacks.on_exit) lines->callbacks.on_exit(result);
  };
  auto state = start_duplex_state(executor, std::move(cmd), std::move(duplex));
  if (!state.ok()) return std::move(state).error();
  if (stdin_data && !stdin_data->empty()) state.value()->write(std::move(*stdin_data));
  state.value()->close_stdin();

  /// Dropping the handle stops the child; the state stays alive until the child is reaped.
  class Handle final : public LineStream {
   public:
    Handle(std::shared_ptr<DuplexState> state, std::shared_ptr<Lines> lines)
        : state_(std::move(state)), lines_(std::move(lines)) {}
    ~Handle() override { stop(); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    void stop() override {
      lines_->stopped = true;
      state_->stop();
    }
    int pid() const override { return state_->pid(); }

   private:
    std::shared_ptr<DuplexState> state_;
    std::shared_ptr<Lines> lines_;
  };
  return std::shared_ptr<LineStream>(std::make_shared<Handle>(std::move(state).value(), lines));
}

Result<std::shared_ptr<Duplex>> start_duplex(const asio::any_io_executor& executor, Command cmd,
                                             Duplex::Callbacks callbacks) {
  auto state = start_duplex_state(executor, std::move(cmd), std::move(callbacks));
  if (!state.ok()) return std::move(state).error();
  return std::shared_ptr<Duplex>(std::make_shared<DuplexHandle>(std::move(state).value()));
}

Result<std::shared_ptr<Duplex>> start_duplex_on(const Strand& strand, Command cmd,
                                                Duplex::Callbacks callbacks) {
  auto state = start_duplex_state(strand, std::move(cmd), std::move(callbacks));
  if (!state.ok()) return std::move(state).error();
  return std::shared_ptr<Duplex>(std::make_shared<DuplexHandle>(std::move(state).value()));
}

std::optional<std::filesystem::path> find_program(std::string_view name, std::string_view path_env,
                                                  const std::filesystem::path& cwd) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path candidate(name);
    if (candidate.is_relative()) candidate = cwd / candidate;
    if (!is_executable_file(candidate)) return std::nullopt;
    return make_absolute(candidate);
  }
  // Like execvp: each PATH entry in order; an empty entry means the working directory.
  std::size_t start = 0;
  for (;;) {
    const auto colon = path_env.find(':', start);
    const auto entry =
        path_env.substr(start, colon == std::string_view::npos ? colon : colon - start);
    std::filesystem::path dir = entry.empty() ? cwd : std::filesystem::path(entry);
    if (dir.is_relative()) dir = cwd / dir;
    auto candidate = dir / name;
    if (is_executable_file(candidate)) return make_absolute(candidate);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

void set_launcher(const std::filesystem::path& launcher_path) {
  auto& config = launcher_config();
  std::lock_guard lock(config.mutex);
  config.path = make_absolute(launcher_path);
}

const std::filesystem::path& launcher() {
  auto& config = launcher_config();
  std::lock_guard lock(config.mutex);
  if (config.path.empty()) config.path = default_launcher();
  return config.path;
}

void kill_all() {
  auto& reg = registry();
  std::lock_guard lock(reg.mutex);
  for (pid_t group : reg.groups) {
    ::kill(-group, SIGKILL);
    ::kill(group, SIGKILL);
  }
}

std::size_t running_count() {
  auto& reg = registry();
  std::lock_guard lock(reg.mutex);
  return reg.groups.size();
}

}  // namespace hearth::proc
