#include "proc/process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "common/pipes.hpp"
#include "proc/testing.hpp"

namespace hearth::proc {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Status = RunResult::Status;

// hearth ignores SIGPIPE process-wide (see process.hpp); so must every binary that runs children.
const bool kSigpipeIgnored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();

constexpr const char* kPath = "PATH=/usr/bin:/bin";
constexpr const char* kPython = "/usr/bin/python3";

Command make_command(std::vector<std::string> argv) {
  Command cmd;
  auto program = find_program(argv.at(0), "/usr/bin:/bin", "/");
  EXPECT_TRUE(program.has_value()) << argv.at(0);
  cmd.program = program.value_or(argv.at(0));
  cmd.argv = std::move(argv);
  cmd.env = {kPath};
  cmd.cwd = "/";
  return cmd;
}

Command shell(const std::string& script) {
  return make_command({"sh", "-c", script});
}

Command python(const std::string& code) {
  Command cmd = make_command({kPython, "-I", "-S", "-c", code});
  return cmd;
}

RunResult run_sync(Command cmd, RunLimits limits = {},
                   std::function<void(std::string_view)> on_event = {}) {
  asio::io_context io;
  RunResult result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        result = co_await run(std::move(cmd), limits, std::move(on_event));
      },
      asio::detached);
  io.run();
  return result;
}

/// True once `pid` no longer runs (gone, or a zombie waiting for init), polling up to `limit`.
bool process_gone(pid_t pid, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (std::getline(stat, line)) {
      const auto close = line.rfind(')');
      if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') {
        return true;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

using proc::testing::wait_until;

std::string random_payload(std::size_t size, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist('!', '~');
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    s[i] = (i % 80 == 79) ? '\n' : static_cast<char>(dist(gen));
  }
  return s;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hearth-proc-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content,
                              std::filesystem::perms perms = std::filesystem::perms::owner_read |
                                                             std::filesystem::perms::owner_write) {
    auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    std::filesystem::permissions(file, perms);
    return file;
  }

 private:
  std::filesystem::path path_;
};

// ---------------------------------------------------------------------------------------------

TEST(ProcRun, CollectsStdoutStderrAndExitCode) {
  auto r = run_sync(shell("echo out; echo err >&2; exit 3"));
  ASSERT_EQ(r.status, Status::kExited) << r.spawn_error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err_tail, "err\n");
  EXPECT_GT(r.duration.count(), 0);
  EXPECT_EQ(running_count(), 0u);
}

TEST(ProcRun, ExitZeroWithNoOutput) {
  auto r = run_sync(make_command({"true"}));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err_tail, "");
}

TEST(ProcRun, ReportsTerminatingSignal) {
  auto r = run_sync(shell("kill -TERM $$"));
  ASSERT_EQ(r.status, Status::kSignaled);
  EXPECT_EQ(r.signal, SIGTERM);
}

TEST(ProcRun, KeepsOnlyTheTailOfStderr) {
  RunLimits limits;
  limits.stderr_tail = 10;
  auto r = run_sync(python("import sys\nsys.stderr.write('a' * 300000 + '0123456789')"), limits);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.err_tail, "0123456789");
}

TEST(ProcRun, PassesArgvUnchanged) {
  auto r = run_sync(make_command({"printf", "[%s]", "a b", "", "$HOME", "*"}));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "[a b][][$HOME][*]");
}

TEST(ProcRun, StdinIsDevNullWithoutData) {
  auto r = run_sync(shell("cat; echo end"));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "end\n");
}

TEST(ProcRun, LargeStdinWhileTheChildWritesLargeOutput) {
  // cat writes while we still write: a run that wrote stdin before reading would deadlock with
  // both 64 KiB pipe buffers full.
  const std::string payload = random_payload(1 << 20, 1);
  Command cat = make_command({"cat"});
  cat.stdin_data = payload;
  auto r = run_sync(cat);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out.size(), payload.size());
  EXPECT_TRUE(r.out == payload);

  // And a child that writes 1 MiB before it reads anything.
  Command py = python(
      "import sys, hashlib\n"
      "sys.stdout.write('x' * (1 << 20)); sys.stdout.flush()\n"
      "data = sys.stdin.buffer.read()\n"
      "sys.stdout.write('|%d' % len(data))\n");
  py.stdin_data = payload;
  auto r2 = run_sync(py);
  ASSERT_EQ(r2.status, Status::kExited) << r2.err_tail;
  EXPECT_EQ(r2.out, std::string(1 << 20, 'x') + "|" + std::to_string(payload.size()));
}

TEST(ProcRun, StdinNotReadIsNotAnError) {
  Command cmd = make_command({"true"});
  cmd.stdin_data = std::string(1 << 20, 'z');
  auto r = run_sync(cmd);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(ProcRun, TimeoutKillsTheWholeGroup) {
  RunLimits limits;
  limits.timeout = 300ms;
  // The grandchild ignores SIGTERM: only SIGKILL of the group ends it.
  auto r = run_sync(shell("trap '' TERM; sleep 100 & echo $!; wait"), limits);
  ASSERT_EQ(r.status, Status::kTimedOut);
  EXPECT_LT(r.duration, std::chrono::microseconds(10s));
  const pid_t grandchild = std::stoi(r.out);
  EXPECT_TRUE(process_gone(grandchild)) << grandchild;
  EXPECT_EQ(running_count(), 0u);
}

TEST(ProcRun, BackgroundProcessIsKilledWhenTheMainChildExits) {
  // The background sleep inherits stdout; waiting for EOF alone would take 100 s.
  auto r = run_sync(shell("sleep 100 & echo $!"));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.duration, std::chrono::microseconds(10s));
  const pid_t background = std::stoi(r.out);
  EXPECT_TRUE(process_gone(background)) << background;
}

TEST(ProcRun, EscapedProcessHoldingAPipeDoesNotHoldTheCall) {
  // setsid leaves the group, so the group kill misses it; the drain window bounds the wait.
  auto r = run_sync(shell("setsid sleep 30 & echo $!; echo done"));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_LT(r.duration, std::chrono::microseconds(10s));
  std::istringstream lines(r.out);
  pid_t escaped = 0;
  std::string second;
  lines >> escaped >> second;
  EXPECT_EQ(second, "done");
  ASSERT_GT(escaped, 0);
  ::kill(escaped, SIGKILL);
  EXPECT_TRUE(process_gone(escaped));
}

TEST(ProcRun, OutputLimitKillsTheChild) {
  RunLimits limits;
  limits.max_stdout = 1000;
  auto r = run_sync(make_command({"yes"}), limits);
  ASSERT_EQ(r.status, Status::kOutputLimit);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.out.substr(0, 4), "y\ny\n");
}

TEST(ProcRun, EventPipeLinesArriveInOrder) {
  Command cmd = shell("echo one >&3; echo '{\"a\":1}' >&3; printf 'two\\nthree' >&3; echo done");
  cmd.event_pipe = true;
  std::vector<std::string> events;
  auto r = run_sync(cmd, {}, [&](std::string_view line) { events.emplace_back(line); });
  ASSERT_EQ(r.status, Status::kExited) << r.err_tail;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(events, (std::vector<std::string>{"one", "{\"a\":1}", "two", "three"}));
}

TEST(ProcRun, EventLinesArriveWhileTheChildRuns) {
  // The child waits for the daemon to see its event before it exits: proof of live delivery.
  TempDir dir;
  auto flag = dir.path() / "seen";
  Command cmd =
      shell("echo ping >&3; while [ ! -e '" + flag.string() + "' ]; do sleep 0.02; done; echo ok");
  cmd.event_pipe = true;
  RunLimits limits;
  limits.timeout = 20s;
  std::vector<std::string> events;
  auto r = run_sync(cmd, limits, [&](std::string_view line) {
    events.emplace_back(line);
    std::ofstream(flag) << "x";
  });
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_EQ(events, std::vector<std::string>{"ping"});
}

TEST(ProcRun, OverlongEventLinesAreDropped) {
  Command cmd = python(
      "import os\n"
      "os.write(3, b'short\\n' + b'y' * 5000 + b'\\nafter\\n')\n");
  cmd.event_pipe = true;
  RunLimits limits;
  limits.max_event_line = 100;
  std::vector<std::string> events;
  auto r = run_sync(cmd, limits, [&](std::string_view line) { events.emplace_back(line); });
  ASSERT_EQ(r.status, Status::kExited) << r.err_tail;
  EXPECT_EQ(events, (std::vector<std::string>{"short", "after"}));
}

TEST(ProcRun, NoDescriptorLeaksIntoTheChild) {
  // Descriptors the daemon holds without close-on-exec (as Asio sockets are) must not reach it.
  const Fd plain(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(plain.valid());
  auto sockets = make_socket_pair(SOCK_STREAM);
  ASSERT_TRUE(sockets.ok());
  const std::string list_fds =
      "import os\n"
      "fds = []\n"
      "for fd in range(4096):\n"
      "    try:\n"
      "        os.fstat(fd); fds.append(fd)\n"
      "    except OSError:\n"
      "        pass\n"
      "print(fds)\n";
  auto r = run_sync(python(list_fds));
  ASSERT_EQ(r.status, Status::kExited) << r.err_tail;
  EXPECT_EQ(r.out, "[0, 1, 2]\n");

  Command with_events = python(list_fds);
  with_events.event_pipe = true;
  with_events.stdin_data = "";
  auto r2 = run_sync(with_events);
  ASSERT_EQ(r2.status, Status::kExited) << r2.err_tail;
  EXPECT_EQ(r2.out, "[0, 1, 2, 3]\n");
}

std::size_t open_descriptor_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++n;
  }
  return n;
}

TEST(ProcRun, NoDescriptorLeaksInTheDaemon) {
  // Warm up whatever the first run allocates once (spdlog, the Asio reactor's own descriptors are
  // per io_context and closed with it).
  (void)run_sync(shell("true"));
  const std::size_t before = open_descriptor_count();
  RunLimits quick;
  quick.timeout = 100ms;
  Command events = shell("echo e >&3; cat");
  events.event_pipe = true;
  events.stdin_data = "in";
  (void)run_sync(events);
  (void)run_sync(shell("sleep 100 & sleep 100"), quick);  // timed out
  RunLimits tiny;
  tiny.max_stdout = 10;
  (void)run_sync(make_command({"yes"}), tiny);  // output limit
  Command bad_cwd = shell("true");
  bad_cwd.cwd = "/nonexistent-dir";
  (void)run_sync(bad_cwd);  // spawn failure
  EXPECT_EQ(open_descriptor_count(), before);
}

TEST(ProcRun, EnvironmentIsExactlyTheOneGiven) {
  ::setenv("HEARTH_DAEMON_SECRET", "do-not-leak", 1);
  Command cmd = make_command({"env"});
  cmd.env = {"A=1", "B=two words"};
  auto r = run_sync(cmd);
  ::unsetenv("HEARTH_DAEMON_SECRET");
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "A=1\nB=two words\n");
}

TEST(ProcRun, SignalStateIsReset) {
  // SIGPIPE is ignored in this process; the child must get the default disposition and an
  // empty mask (SigIgn and SigBlk of /proc/self/status are all zero).
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &old), 0);
  auto r = run_sync(shell("grep -E '^(SigIgn|SigBlk)' /proc/self/status"));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(ProcRun, ChildRunsInItsOwnSessionAndCwd) {
  TempDir dir;
  Command cmd = python(
      "import os\nprint(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid(), os.getcwd())");
  cmd.cwd = dir.path();
  auto r = run_sync(cmd);
  ASSERT_EQ(r.status, Status::kExited) << r.err_tail;
  EXPECT_EQ(r.out, "True True " + std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(ProcRun, LauncherAppliesNoNewPrivsAndNoCore) {
  auto r = run_sync(shell("grep NoNewPrivs /proc/self/status; ulimit -c"));
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "NoNewPrivs:\t1\n0\n");
}

TEST(ProcRun, UnexecutableProgramExits127WithMessage) {
  Command cmd = make_command({"true"});
  cmd.program = "/nonexistent/prog";
  auto r = run_sync(cmd);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err_tail,
            "hearth-launch: cannot execute /nonexistent/prog: No such file or directory\n");
}

TEST(ProcRun, LauncherRefusesUnknownOptionsAndAForeignParent) {
  // The launcher started by the launcher: its own option parsing, seen from outside.
  Command nested = make_command({"true"});
  nested.program = launcher();
  nested.argv = {"hearth-launch", "--jail=strict", "--", "/usr/bin/true", "true"};
  auto r = run_sync(nested);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err_tail, "hearth-launch: unknown option: --jail=strict\n");

  // A parent other than the expected one: the daemon is gone, do not run.
  nested.argv = {"hearth-launch", "--parent=1", "--", "/usr/bin/true", "true"};
  r = run_sync(nested);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err_tail, "hearth-launch: parent process is gone\n");

  // Without options: PROGRAM ARGV0 ARGS..., with argv[0] as given.
  nested.argv = {"hearth-launch", "/bin/sh", "custom-name", "-c", "echo \"$0\""};
  r = run_sync(nested);
  ASSERT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "custom-name\n");

  nested.argv = {"hearth-launch", "/bin/sh"};
  r = run_sync(nested);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err_tail.find("usage"), std::string::npos) << r.err_tail;
}

TEST(ProcRun, MissingCwdOrLauncherIsASpawnFailure) {
  Command cmd = make_command({"true"});
  cmd.cwd = "/nonexistent-dir";
  auto r = run_sync(cmd);
  EXPECT_EQ(r.status, Status::kSpawnFailed);
  EXPECT_NE(r.spawn_error.find("/nonexistent-dir"), std::string::npos) << r.spawn_error;

  // A copy: set_launcher changes what launcher() refers to.
  std::filesystem::path saved = launcher();  // NOLINT(performance-unnecessary-copy-initialization)
  set_launcher("/nonexistent/hearth-launch");
  auto r2 = run_sync(make_command({"true"}));
  set_launcher(saved);
  EXPECT_EQ(r2.status, Status::kSpawnFailed);
  EXPECT_NE(r2.spawn_error.find("/nonexistent/hearth-launch"), std::string::npos) << r2.spawn_error;
  EXPECT_EQ(running_count(), 0u);
}

TEST(ProcRun, DefaultLauncherIsBesideTheExecutable) {
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(launcher(), self.parent_path() / "hearth-launch");
  EXPECT_TRUE(std::filesystem::exists(launcher()));
}

TEST(ProcRun, SixtyFourConcurrentRunsAreAllComplete) {
  // The reference runtime resolves on exit alone and loses output here; every body must be whole.
  TempDir dir;
  const std::string payload = random_payload(std::size_t{100} * 1024, 7);
  dir.write("payload.txt", payload);
  dir.write("emit.sh", "cat payload.txt\ncat\necho \"stderr of $1\" >&2\n");
  constexpr int kRuns = 64;
  std::vector<RunResult> results(kRuns);
  asio::io_context io;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) {
    Command cmd = make_command({"sh", "emit.sh", std::to_string(i)});
    cmd.cwd = dir.path();
    cmd.stdin_data = "run " + std::to_string(i) + "\n";
    asio::co_spawn(
        io,
        [&results, i, cmd = std::move(cmd)]() mutable -> asio::awaitable<void> {
          RunLimits limits;
          limits.timeout = 120s;
          results[static_cast<std::size_t>(i)] = co_await run(std::move(cmd), limits);
        },
        asio::detached);
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  const auto elapsed = std::chrono::steady_clock::now() - started;
  std::printf("64 concurrent runs of 100 KB on 2 threads: %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  int complete = 0;
  for (int i = 0; i < kRuns; ++i) {
    const auto& r = results[static_cast<std::size_t>(i)];
    EXPECT_EQ(r.status, Status::kExited) << i << " " << r.spawn_error;
    EXPECT_EQ(r.exit_code, 0) << i;
    EXPECT_EQ(r.err_tail, "stderr of " + std::to_string(i) + "\n");
    const std::string expected = payload + "run " + std::to_string(i) + "\n";
    EXPECT_EQ(r.out.size(), expected.size()) << i;
    if (r.out == expected) ++complete;
  }
  EXPECT_EQ(complete, kRuns);
  EXPECT_EQ(running_count(), 0u);
}

TEST(ProcRun, KillAllEndsRunningChildren) {
  asio::io_context io;
  RunResult result;
  bool done = false;
  // Built outside the coroutine: g++ 12 miscompiles braced lists of literals inside coroutines.
  Command sleep = make_command({"sleep", "100"});
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        RunLimits limits;
        limits.timeout = 60s;
        result = co_await run(std::move(sleep), limits);
        done = true;
      },
      asio::detached);
  std::thread io_thread([&] { io.run(); });
  EXPECT_TRUE(wait_until([] { return running_count() == 1; }));
  kill_all();
  io_thread.join();
  ASSERT_TRUE(done);
  EXPECT_EQ(result.status, Status::kSignaled);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(running_count(), 0u);
}

TEST(ProcRun, AbandonedRunKillsAndReapsItsChild) {
  TempDir dir;
  const auto pid_file = dir.path() / "pid";
  {
    asio::io_context io;
    Command cmd = shell("echo $$ > '" + pid_file.string() + "'; exec sleep 100");
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { co_await run(std::move(cmd), RunLimits{}); },
        asio::detached);
    // Run until the child is up, then destroy the io_context with the run still pending.
    while (!std::filesystem::exists(pid_file) || std::filesystem::file_size(pid_file) == 0) {
      io.run_for(20ms);
    }
    EXPECT_EQ(running_count(), 1u);
  }
  EXPECT_EQ(running_count(), 0u);
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  // Reaped by the destructor: not even a zombie is left.
  EXPECT_EQ(::kill(child, 0), -1);
}

TEST(ProcRun, CallerCancellationDoesNotAbandonTheChild) {
  // A cancelled awaiting coroutine still gets a complete run (the run ignores cancellation).
  asio::io_context io;
  RunResult result;
  asio::cancellation_signal signal;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        RunLimits limits;
        limits.timeout = 60s;
        result = co_await run(shell("sleep 0.3; echo finished"), limits);
      },
      asio::bind_cancellation_slot(signal.slot(), asio::detached));
  asio::steady_timer timer(io, 50ms);
  timer.async_wait([&](auto) { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  EXPECT_EQ(result.status, Status::kExited);
  EXPECT_EQ(result.out, "finished\n");
}

// ---------------------------------------------------------------------------------------------
// LineStream

using proc::testing::IoThread;

struct Collected {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> lines;
  std::optional<RunResult> exit;
  int exits = 0;

  LineStream::Callbacks callbacks() {
    return {[this](std::string line) {
              std::lock_guard lock(mutex);
              lines.push_back(std::move(line));
              changed.notify_all();
            },
            [this](const RunResult& r) {
              std::lock_guard lock(mutex);
              exit = r;
              ++exits;
              changed.notify_all();
            }};
  }
  bool wait(const std::function<bool()>& condition, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, condition);
  }
};

TEST(ProcLineStream, DeliversLinesThenExit) {
  IoThread io;
  Collected c;
  auto stream = start_line_stream(
      io.executor(), shell("echo a; echo; echo '{\"b\":2}'; printf c; echo oops >&2; exit 4"),
      c.callbacks());
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.wait([&] { return c.exits == 1; }));
  std::lock_guard lock(c.mutex);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "", "{\"b\":2}", "c"}));
  EXPECT_EQ(c.exit->status, Status::kExited);
  EXPECT_EQ(c.exit->exit_code, 4);
  EXPECT_EQ(c.exit->err_tail, "oops\n");
}

TEST(ProcLineStream, StdinDataIsDelivered) {
  IoThread io;
  Collected c;
  Command cmd = make_command({"cat"});
  cmd.stdin_data = "x\ny\n";
  auto stream = start_line_stream(io.executor(), cmd, c.callbacks());
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.wait([&] { return c.exits == 1; }));
  std::lock_guard lock(c.mutex);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"x", "y"}));
}

TEST(ProcLineStream, StopKillsTheGroupAndSilencesCallbacks) {
  IoThread io;
  Collected c;
  auto stream = start_line_stream(
      io.executor(), shell("sleep 100 & echo $!; while true; do echo tick; sleep 0.02; done"),
      c.callbacks());
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.wait([&] { return c.lines.size() >= 3; }));
  (*stream)->stop();
  std::size_t seen;
  pid_t background;
  {
    std::lock_guard lock(c.mutex);
    seen = c.lines.size();
    background = std::stoi(c.lines.front());
  }
  EXPECT_TRUE(process_gone(background));
  EXPECT_TRUE(wait_until([] { return running_count() == 0; }));
  std::this_thread::sleep_for(200ms);
  std::lock_guard lock(c.mutex);
  EXPECT_EQ(c.lines.size(), seen);
  EXPECT_EQ(c.exits, 0);
  (*stream)->stop();  // idempotent
}

TEST(ProcLineStream, StopFromInsideACallback) {
  TempDir dir;
  const auto go = dir.path() / "go";
  IoThread io;
  std::atomic<LineStream*> self{nullptr};
  std::atomic<int> lines{0};
  std::atomic<int> exits{0};
  LineStream::Callbacks callbacks{[&](const std::string&) {
                                    ++lines;
                                    self.load()->stop();
                                  },
                                  [&](const RunResult&) { ++exits; }};
  // The child starts printing only once `self` is set; both lines come in one chunk, and the
  // second must not be delivered after stop().
  auto stream =
      start_line_stream(io.executor(),
                        shell("while [ ! -e '" + go.string() +
                              "' ]; do sleep 0.01; done; printf 'tick\\ntock\\n'; sleep 100"),
                        std::move(callbacks));
  ASSERT_TRUE(stream.ok());
  self = stream->get();
  std::ofstream(go) << "x";
  EXPECT_TRUE(wait_until([&] { return lines.load() >= 1 && running_count() == 0; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(lines.load(), 1);
  EXPECT_EQ(exits.load(), 0);
}

TEST(ProcLineStream, DroppingTheLastReferenceStopsTheChild) {
  IoThread io;
  Collected c;
  {
    auto stream = start_line_stream(io.executor(), shell("echo $$; exec sleep 100"), c.callbacks());
    ASSERT_TRUE(stream.ok());
    ASSERT_TRUE(c.wait([&] { return !c.lines.empty(); }));
  }
  EXPECT_TRUE(wait_until([] { return running_count() == 0; }));
  std::lock_guard lock(c.mutex);
  EXPECT_TRUE(process_gone(std::stoi(c.lines.front())));
  EXPECT_EQ(c.exits, 0);
}

TEST(ProcLineStream, OverlongLinesAreDropped) {
  IoThread io;
  Collected c;
  auto stream = start_line_stream(
      io.executor(), python("print('ok'); print('z' * 5000); print('after')"), c.callbacks(), 100);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.wait([&] { return c.exits == 1; }));
  std::lock_guard lock(c.mutex);
  EXPECT_EQ(c.lines, (std::vector<std::string>{"ok", "after"}));
}

TEST(ProcLineStream, SpawnFailureIsAnError) {
  IoThread io;
  Collected c;
  Command cmd = make_command({"true"});
  cmd.cwd = "/nonexistent-dir";
  auto stream = start_line_stream(io.executor(), cmd, c.callbacks());
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().code, ErrorCode::kHandlerError);
}

// ---------------------------------------------------------------------------------------------
// find_program

TEST(ProcFindProgram, SearchesTheGivenPath) {
  EXPECT_EQ(find_program("sh", "/nonexistent:/usr/bin:/bin", "/"),
            std::filesystem::path("/usr/bin/sh"));
  EXPECT_EQ(find_program("sh", "/nonexistent", "/"), std::nullopt);
  EXPECT_EQ(find_program("no-such-program-hearth", "/usr/bin:/bin", "/"), std::nullopt);
  EXPECT_EQ(find_program("", "/usr/bin", "/"), std::nullopt);
}

TEST(ProcFindProgram, NamesWithSlashAreRelativeToCwd) {
  TempDir dir;
  using std::filesystem::perms;
  dir.write("run.sh", "#!/bin/sh\n", perms::owner_all);
  dir.write("data.txt", "x", perms::owner_read | perms::owner_write);
  std::filesystem::create_directory(dir.path() / "sub");
  EXPECT_EQ(find_program("./run.sh", "/usr/bin", dir.path()), dir.path() / "run.sh");
  EXPECT_EQ(find_program("sub/../run.sh", "", dir.path()), dir.path() / "run.sh");
  EXPECT_EQ(find_program("./data.txt", "/usr/bin", dir.path()), std::nullopt);  // not executable
  EXPECT_EQ(find_program("./sub", "/usr/bin", dir.path()), std::nullopt);       // a directory
  EXPECT_EQ(find_program("/usr/bin/env", "", dir.path()), std::filesystem::path("/usr/bin/env"));
  // Empty PATH entry: the working directory, as execvp does.
  EXPECT_EQ(find_program("run.sh", "/nonexistent:", dir.path()), dir.path() / "run.sh");
  EXPECT_EQ(find_program("run.sh", "/usr/bin", dir.path()), std::nullopt);
}

// --- Duplex ------------------------------------------------------------------------------------

struct DuplexCollected {
  std::mutex mutex;
  std::condition_variable changed;
  std::string out;
  std::string err;
  std::optional<RunResult> exit;

  Duplex::Callbacks callbacks() {
    return {[this](std::string_view data) {
              std::lock_guard lock(mutex);
              out.append(data);
              changed.notify_all();
            },
            [this](std::string_view data) {
              std::lock_guard lock(mutex);
              err.append(data);
              changed.notify_all();
            },
            [this](const RunResult& r) {
              std::lock_guard lock(mutex);
              exit = r;
              changed.notify_all();
            }};
  }
  bool wait(const std::function<bool()>& condition, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, condition);
  }
};

TEST(ProcDuplex, ConversesOverStdinAndStdout) {
  IoThread io;
  DuplexCollected c;
  auto child = start_duplex(io.executor(), make_command({"cat"}), c.callbacks());
  ASSERT_TRUE(child.ok());
  // Many writes from several threads arrive whole and, per thread, in order.
  std::vector<std::thread> writers;
  writers.reserve(4);
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) EXPECT_TRUE((*child)->write(std::to_string(t) + "\n"));
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_TRUE(c.wait([&] { return c.out.size() == std::size_t{200} * 2; }));
  {
    std::lock_guard lock(c.mutex);
    for (char digit : {'0', '1', '2', '3'}) {
      EXPECT_EQ(std::count(c.out.begin(), c.out.end(), digit), 50);
    }
    EXPECT_FALSE(c.exit);
  }
  (*child)->stop();
  EXPECT_FALSE((*child)->write("late\n"));
  EXPECT_TRUE(wait_until([] { return running_count() == 0; }));
  std::lock_guard lock(c.mutex);
  EXPECT_FALSE(c.exit) << "no callback after stop()";
}

TEST(ProcDuplex, ReportsAnExitAndItsStderr) {
  IoThread io;
  DuplexCollected c;
  auto child = start_duplex(
      io.executor(), shell("read line; echo \"got $line\"; echo bye >&2; exit 3"), c.callbacks());
  ASSERT_TRUE(child.ok());
  EXPECT_TRUE((*child)->write("ping\n"));
  ASSERT_TRUE(c.wait([&] { return c.exit.has_value(); }));
  std::lock_guard lock(c.mutex);
  EXPECT_EQ(c.out, "got ping\n");
  EXPECT_EQ(c.err, "bye\n");
  EXPECT_EQ(c.exit->status, Status::kExited);
  EXPECT_EQ(c.exit->exit_code, 3);
  EXPECT_EQ(c.exit->err_tail, "bye\n");
}

}  // namespace
}  // namespace hearth::proc

namespace hearth::proc {
namespace {

RunResult run_started_sync(std::unique_ptr<Started> child, std::optional<std::string> stdin_data,
                           RunLimits limits = {}) {
  asio::io_context io;
  RunResult result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        result = co_await run_started(std::move(child), std::move(stdin_data), limits);
      },
      asio::detached);
  io.run();
  return result;
}

TEST(StartedAhead, RunsLaterWithTheStdinGivenThen) {
  Command cmd = make_command({"cat"});
  cmd.stdin_data = std::string();  // a stdin pipe; what goes into it comes with the run
  auto started = start_ahead(cmd);
  ASSERT_TRUE(started.ok()) << started.error().message;
  const int pid = started.value()->pid();
  EXPECT_GT(pid, 0);
  auto r = run_started_sync(std::move(started).value(), std::string("given at the call"));
  EXPECT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "given at the call");
  EXPECT_EQ(r.pid, pid);
  EXPECT_TRUE(process_gone(pid, 1s));
}

TEST(StartedAhead, TheTimeLimitCountsFromTheRun) {
  // Started 600 ms before its run, with a 500 ms limit: the 300 ms left of its work fit in it.
  auto started = start_ahead(shell("sleep 0.9; echo done"));
  ASSERT_TRUE(started.ok()) << started.error().message;
  std::this_thread::sleep_for(600ms);
  RunLimits limits;
  limits.timeout = 500ms;
  auto r = run_started_sync(std::move(started).value(), std::nullopt, limits);
  EXPECT_EQ(r.status, Status::kExited);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_LT(r.duration, 500ms);
}

TEST(StartedAhead, DroppedUnusedItIsKilledAndReaped) {
  auto started = start_ahead(shell("sleep 30"));
  ASSERT_TRUE(started.ok()) << started.error().message;
  const int pid = started.value()->pid();
  const auto before = running_count();
  EXPECT_GE(before, 1U);
  started.value().reset();
  // Reaped, not a zombie: the pid no longer exists at all.
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(running_count(), before - 1);
}

}  // namespace
}  // namespace hearth::proc
