/// hearth-launch: the small program every handler child is started through.
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
/// Options come first and are all of the form `--name=value` or `--name`; the first argument that
/// does not start with `--`, or a lone `--`, ends them (the daemon always writes the `--`, so a
/// PROGRAM starting with `--` is never mistaken for an option). An unknown option is an error:
/// a launcher older than its daemon must refuse a restriction it does not know rather than run
/// without it. Options:
///
///   --parent=PID   the pid the launcher's parent must have (the daemon). Checked after
///                  PR_SET_PDEATHSIG is armed, which closes the window in which the daemon could
///                  die before the death signal applies. Without it, the parent seen at start-up
///                  is used (and init, pid 1, is refused).
///
/// What it does, in order: PR_SET_PDEATHSIG(SIGKILL) (the child dies with the daemon), the parent
/// check, default disposition for the signals glibc reserves for itself (32 and 33: posix_spawn
/// leaves them ignored, and an ignored disposition would survive execve), PR_SET_NO_NEW_PRIVS (no
/// set-uid or file-capability gain, and a prerequisite for seccomp), RLIMIT_CORE = 0 (no core files
/// with handler data in the service folder), then execve(PROGRAM) with the environment it was
/// given. Everything else (fds, session, signal mask and dispositions, working directory) was set
/// by posix_spawn in the daemon.
///
/// Exit status 127, with a one-line message on stderr, when it cannot run PROGRAM.

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {

constexpr int kExitCannotRun = 127;

[[noreturn]] void fail(const char* what, const char* detail) {
  std::fprintf(stderr, "hearth-launch: %s%s%s\n", what, detail[0] != '\0' ? ": " : "", detail);
  std::_Exit(kExitCannotRun);
}

/// Parses a strictly positive decimal pid; -1 when `text` is not one.
pid_t parse_pid(std::string_view text) {
  if (text.empty() || text.size() > 9) return -1;
  pid_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value > 0 ? value : -1;
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

}  // namespace

int main(int argc, char** argv) {
  // Read before anything else: if the daemon dies from here on, getppid() changes.
  pid_t expected_parent = getppid();
  bool parent_given = false;

  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg(argv[i]);
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.substr(0, 2) != "--") break;
    if (arg.substr(0, 9) == "--parent=") {
      expected_parent = parse_pid(arg.substr(9));
      if (expected_parent < 0) fail("invalid option", argv[i]);
      parent_given = true;
      continue;
    }
    fail("unknown option", argv[i]);
  }
  if (argc - i < 2) fail("usage: hearth-launch [OPTION...] [--] PROGRAM ARGV0 [ARG...]", "");
  const char* program = argv[i];

  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    fail("PR_SET_PDEATHSIG", std::strerror(errno));
  // The daemon may have died before the death signal was armed: then nobody will ever read our
  // output or kill us, so do not start the handler at all.
  if (getppid() != expected_parent || (!parent_given && expected_parent == 1)) {
    fail("parent process is gone", "");
  }
  reset_reserved_signals();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail("PR_SET_NO_NEW_PRIVS", std::strerror(errno));
  const rlimit no_core{0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0) fail("RLIMIT_CORE", std::strerror(errno));

  execve(program, argv + i + 1, environ);
  const int error = errno;
  std::fprintf(stderr, "hearth-launch: cannot execute %s: %s\n", program, std::strerror(error));
  return kExitCannotRun;
}
