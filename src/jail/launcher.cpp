/// The launcher: what the hearth-launch executable runs, the small program every handler child
/// is started through (src/exe/hearth_launch.cpp holds only its main()).
///
/// The daemon never fork()s (a multi-threaded process with a large address space); it
/// posix_spawn()s this launcher with the pipes, session and signal state already set up, and the
/// launcher applies the restrictions that posix_spawn cannot express, then execve()s the handler.
///
/// Command line (every element is one argv entry; nothing is split or globbed):
///
///     hearth-launch [OPTION...] [--] PROGRAM ARGV0 [ARG...]
///
///   PROGRAM   path handed to execve() as is (the daemon passes an absolute path; no PATH search)
///   ARGV0     argv[0] of the new program; ARG... follow it unchanged
///
/// The options are the jail policy, defined (and parsed) in src/jail/launch_options.hpp; an
/// unknown option is an error. `--parent=PID` is the pid the launcher's parent must have (the
/// daemon), checked after PR_SET_PDEATHSIG is armed, which closes the window in which the daemon
/// could die before the death signal applies.
///
/// Always, in order: PR_SET_PDEATHSIG(SIGKILL) (the child dies with the daemon), the parent check,
/// default disposition for the signals glibc reserves for itself (32 and 33: posix_spawn leaves
/// them ignored, and an ignored disposition would survive execve). Then:
///
/// - without --jail: PR_SET_NO_NEW_PRIVS, RLIMIT_CORE = 0, execve(PROGRAM). Only the daemon's
///   --insecure-no-sandbox runs handlers this way.
/// - with --jail: see src/jail/sandbox.hpp for the three processes (L, this one, the supervisor;
///   C, the jail's init; G, the program) and run_jail() below for the order of the steps.
///   With --exec-on-request as well (a warm jail), C waits before it forks G for the daemon's
///   "exec" message on the control socket (jail/control.hpp): G then runs PROGRAM with that
///   message's argv and environment instead of ARGV0 ARG... and the launcher's own environment.
///
/// Everything else (fds 0-3, session, signal mask and dispositions, working directory) was set by
/// posix_spawn in the daemon. Exit status 127, with a one-line message on stderr (and an `error`
/// message on the control socket), when it cannot run PROGRAM as asked.

#include "jail/launcher.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jail/control.hpp"
#include "jail/launch_options.hpp"
#include "jail/sandbox.hpp"

namespace {

constexpr int kExitCannotRun = 127;

[[noreturn]] void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "hearth-launch: %s%s%s\n", what, detail[0] != '\0' ? ": " : "", detail);
  std::_Exit(kExitCannotRun);
}

/// Sets signals [32, SIGRTMIN) to SIG_DFL. glibc's sigaction() refuses them (they are its
/// internal cancellation and set*id signals), so this talks to the kernel directly.
void reset_reserved_signals() {
  struct KernelSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    unsigned long mask;
  };
  for (int sig = 32; sig < SIGRTMIN; ++sig) {
    KernelSigaction action{SIG_DFL, 0, nullptr, 0};
    ::syscall(SYS_rt_sigaction, sig, &action, nullptr, sizeof(action.mask));
  }
}

// ---------------------------------------------------------------------------------------------
// The jail.

using hearth::jail::LaunchOptions;
using hearth::jail::NetMode;
namespace sandbox = hearth::jail::sandbox;

int g_control = -1;  // the control socket to the daemon, -1 when none

/// HEARTH_LAUNCH_TRACE=1 in the environment: each step's time on stderr (for benchmarks).
bool g_trace = false;
void trace(const char* step) {
  if (!g_trace) return;
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  std::fprintf(stderr, "hearth-launch trace %d %ld.%06ld %s\n", static_cast<int>(::getpid()),
               static_cast<long>(t.tv_sec), t.tv_nsec / 1000, step);
}

/// Reports a mechanism that could not be applied, on stderr and to the daemon, and exits 127.
[[noreturn]] void refuse(const sandbox::Failure& failure) {
  std::fprintf(stderr, "hearth-launch: jail: %s: %s\n", failure.mechanism.c_str(),
               failure.detail.c_str());
  std::string message = "error\t" + failure.mechanism + "\t" + failure.detail;
  hearth::jail::send_message(g_control, message);
  std::_Exit(kExitCannotRun);
}

/// One message from L on the sync socket (blocking); empty when L is gone. A descriptor it
/// carries goes to `fd`, or is closed.
std::string receive(int socket, hearth::Fd* fd = nullptr) {
  auto message = hearth::jail::receive_message(socket, /*wait=*/true);
  if (!message) return {};
  if (fd != nullptr) *fd = std::move(message->fd);
  return std::move(message->text);
}

/// G: the program's process. Limits, privileges, Landlock, seccomp, execve.
[[noreturn]] void exec_program(const LaunchOptions& options, const std::string& scratch,
                               hearth::Fd ruleset, std::optional<std::uint32_t> uid,
                               std::optional<std::uint32_t> gid, const char* program, char** argv) {
  // A session of its own, without a controlling terminal (TIOCSTI has no terminal to type into).
  ::setsid();
  trace("G start");
  if (auto f = sandbox::apply_rlimits(options)) refuse(*f);
  trace("G rlimits");
  if (auto f = sandbox::drop_privileges(uid, gid)) refuse(*f);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) refuse({"no_new_privs", std::strerror(errno)});
  trace("G caps+nnp");
  if (auto f = sandbox::landlock_restrict(std::move(ruleset), sandbox::landlock_abi(), scratch)) {
    refuse(*f);
  }
  ::setenv("TMPDIR", scratch.c_str(), 1);
  // Only 0-3 reach the program: the control and sync sockets are close-on-exec; anything else
  // the daemon did not mean to pass goes now.
  ::syscall(SYS_close_range, 5U, ~0U, 0U);
  trace("G landlock");
  if (auto f = sandbox::apply_seccomp(options.net, options.seccomp_bpf)) refuse(*f);
  trace("G seccomp");
  execve(program, argv, environ);
  const int error = errno;
  std::fprintf(stderr, "hearth-launch: cannot execute %s: %s\n", program, std::strerror(error));
  std::_Exit(kExitCannotRun);
}

/// A warm jail's call (--exec-on-request): waits on the control socket for the daemon's "exec"
/// message and reads the argv and environment from the memfd it carries into `argv` and `env`;
/// the environment then replaces this process's own. Exits quietly when the daemon closes the
/// socket instead (it dropped the jail unused).
void receive_exec(std::vector<std::string>& argv, std::vector<std::string>& env) {
  hearth::jail::send_message(g_control, "ready");
  auto message = hearth::jail::receive_message(g_control, /*wait=*/true);
  if (!message) std::_Exit(0);
  if (message->text != "exec" || !message->fd) {
    refuse({"launcher", "expected the call's exec message on the control socket"});
  }
  std::string spec;
  char buffer[65536];
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(message->fd.get(), buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      refuse({"launcher", std::string("reading the exec message: ") + std::strerror(errno)});
    }
    if (n == 0) break;
    offset += n;
    spec.append(buffer, static_cast<std::size_t>(n));
    if (spec.size() > hearth::jail::kMaxExecSpec) refuse({"launcher", "exec message too large"});
  }
  if (!hearth::jail::decode_exec(spec, argv, env)) {
    refuse({"launcher", "malformed exec message"});
  }
  ::clearenv();
  for (auto& entry : env) ::putenv(entry.data());  // `env` outlives the exec
}

/// C: pid 1 of the jail. Sets up the namespaces' contents, starts G, reaps every orphan, and sends
/// G's wait status to L before exiting (which kills whatever G left behind).
[[noreturn]] void jail_init(const LaunchOptions& options, int sync,
                            std::optional<std::uint32_t> uid, std::optional<std::uint32_t> gid,
                            const char* program, char** argv) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) std::_Exit(kExitCannotRun);
  // What needs only this namespace's capabilities runs while L writes the id maps.
  if (auto f = sandbox::setup_proc(options)) refuse(*f);
  if (::sethostname("hearth", 6) != 0) refuse({"uts namespace", std::strerror(errno)});
  if (options.net == NetMode::kProxy) {
    if (g_control < 0) refuse({"network proxy", "no control socket to hand the listener over"});
    if (auto f = sandbox::loopback_up()) refuse(*f);
    std::string error;
    hearth::Fd listener = sandbox::open_listener(options.proxy_port, error);
    if (!listener) refuse({"network proxy", error});
    if (!hearth::jail::send_message(g_control, "listen", listener.get())) {
      refuse({"network proxy", "cannot hand the listener to the daemon"});
    }
    listener.reset();  // the daemon has its own copy now
  }
  if (receive(sync) != "go") std::_Exit(kExitCannotRun);  // L is gone, or failed
  trace("C go");

  std::string scratch;
  if (auto f = sandbox::setup_mounts(options, scratch)) refuse(*f);
  trace("C mounts");
  // The Landlock rules L built meanwhile.
  hearth::Fd ruleset;
  const std::string landlock = receive(sync, &ruleset);
  if (landlock.rfind("landlock-failed\t", 0) == 0) {
    const auto detail = landlock.substr(16);
    refuse({"landlock", detail});
  }
  if (landlock != "landlock" || !ruleset) std::_Exit(kExitCannotRun);

  // A warm jail: everything above was done ahead of the call; the call's arguments come now.
  std::vector<std::string> call_argv;
  std::vector<std::string> call_env;
  std::vector<char*> call_argp;
  if (options.exec_on_request) {
    receive_exec(call_argv, call_env);
    trace("C exec request");
    call_argp.reserve(call_argv.size() + 1);
    for (auto& arg : call_argv) call_argp.push_back(arg.data());
    call_argp.push_back(nullptr);
    argv = call_argp.data();
  }

  const pid_t child = ::fork();
  if (child < 0) refuse({"pid namespace", std::string("fork: ") + std::strerror(errno)});
  if (child == 0) exec_program(options, scratch, std::move(ruleset), uid, gid, program, argv);

  ruleset.reset();
  // Raw: g_control is the launcher's inherited control fd, read by refuse() on every path that
  // ends with _Exit (no destructor runs there); C reports nothing more, so its copy goes now.
  if (g_control >= 0) ::close(g_control);
  int main_status = 0;
  for (;;) {
    int status = 0;
    const pid_t reaped = ::waitpid(-1, &status, 0);
    if (reaped == child) {
      main_status = status;
      break;
    }
    if (reaped < 0 && errno != EINTR) break;
  }
  const std::string message = "status\t" + std::to_string(main_status);
  hearth::jail::send_message(sync, message);
  std::_Exit(0);
}

/// L: the supervisor, outside the namespaces. Returns the exit status for main().
int run_jail(const LaunchOptions& options, const char* program, char** argv) {
  g_control = options.control_fd;
  if (g_control >= 0) ::fcntl(g_control, F_SETFD, FD_CLOEXEC);

  // Ids: a root launcher runs the program as an unprivileged id (nobody unless told otherwise),
  // anyone else as themselves (uid 0 of the new user namespace, without capabilities).
  std::optional<std::uint32_t> uid, gid;
  if (::geteuid() == 0) {
    uid = options.uid.value_or(65534);
    gid = options.gid.value_or(*uid);
    if (::setgroups(0, nullptr) != 0) refuse({"user namespace", "setgroups"});
  }
  trace("L start");

  hearth::FdPair sync;
  if (const int error = hearth::open_socket_pair(sync, SOCK_SEQPACKET | SOCK_CLOEXEC); error != 0) {
    refuse({"launcher", std::string("socketpair: ") + std::strerror(error)});
  }
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
  if (options.net != NetMode::kHost) flags |= CLONE_NEWNET;
  const long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    const int error = errno;
    refuse({"namespaces", std::string("clone (user, pid, mount, ipc, uts") +
                              (options.net != NetMode::kHost ? ", network" : "") +
                              "): " + std::strerror(error)});
  }
  if (pid == 0) {
    sync[0].reset();
    jail_init(options, sync[1].get(), uid, gid, program, argv);
  }
  sync[1].reset();
  const auto child = static_cast<pid_t>(pid);
  trace("L cloned");
  sandbox::Cgroups cgroups;
  auto abandon = [&](const sandbox::Failure& f) {
    ::kill(child, SIGKILL);
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    cgroups.remove();
    refuse(f);
  };
  if (auto f = sandbox::write_id_maps(child, uid, gid)) abandon(*f);
  trace("L maps");
  // C is waiting for "go": it joins the cgroups before it can start anything.
  if (auto f = cgroups.create(options, child)) abandon(*f);
  trace("L cgroups");
  hearth::jail::send_message(sync[0].get(), "go");
  // The Landlock rules, built here while C sets up its mounts.
  sandbox::Outcome landlock;
  if (hearth::Fd ruleset = sandbox::landlock_ruleset(options, sandbox::landlock_abi(), landlock)) {
    hearth::jail::send_message(sync[0].get(), "landlock", ruleset.get());
  } else {
    hearth::jail::send_message(sync[0].get(), "landlock-failed\t" + landlock->detail);
  }
  trace("L landlock");

  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  trace("L reaped");
  // C's report of G's status (absent when C itself was killed or failed to set up).
  std::optional<int> program_status;
  if (auto report = hearth::jail::receive_message(sync[0].get(), /*wait=*/false);
      report && report->text.rfind("status\t", 0) == 0) {
    program_status = std::atoi(report->text.c_str() + 7);
  }
  if (cgroups.oom_killed()) hearth::jail::send_message(g_control, "oom");
  cgroups.remove();
  trace("L cgroups removed");

  const int final_status = program_status.value_or(status);
  if (WIFEXITED(final_status)) return WEXITSTATUS(final_status);
  if (WIFSIGNALED(final_status)) {
    // Die the same way, so that the daemon sees the signal (core dumps are off: RLIMIT_CORE 0).
    const int sig = WTERMSIG(final_status);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    return 128 + sig;
  }
  return kExitCannotRun;
}

}  // namespace

namespace hearth::jail {

int launcher_main(int argc, char** argv) {
  // Read before anything else: if the daemon dies from here on, getppid() changes.
  const pid_t parent_at_start = getppid();

  std::string error;
  auto parsed = hearth::jail::parse_launch_args(argc, argv, error);
  if (!parsed) fail(error.c_str(), "");
  const LaunchOptions& options = parsed->options;
  const bool parent_given = options.parent > 0;
  const pid_t expected_parent = parent_given ? options.parent : parent_at_start;

  if (options.probe) {
    hearth::jail::sandbox::probe(options);
    return 0;
  }
  const int i = parsed->program_index;
  if (argc - i < 2) fail("usage: hearth-launch [OPTION...] [--] PROGRAM ARGV0 [ARG...]", "");
  const char* program = argv[i];

  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    fail("PR_SET_PDEATHSIG", std::strerror(errno));
  }
  // The daemon may have died before the death signal was armed: then nobody will ever read our
  // output or kill us, so do not start the handler at all.
  if (getppid() != expected_parent || (!parent_given && expected_parent == 1)) {
    fail("parent process is gone", "");
  }
  reset_reserved_signals();

  if (options.jail) {
    const char* trace_env = std::getenv("HEARTH_LAUNCH_TRACE");
    g_trace = trace_env != nullptr && trace_env[0] == '1';
    return run_jail(options, program, argv + i + 1);
  }

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail("PR_SET_NO_NEW_PRIVS", std::strerror(errno));
  }
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) fail("RLIMIT_CORE", std::strerror(errno));

  execve(program, argv + i + 1, environ);
  const int exec_error = errno;
  std::fprintf(stderr, "hearth-launch: cannot execute %s: %s\n", program,
               std::strerror(exec_error));
  return kExitCannotRun;
}

}  // namespace hearth::jail
