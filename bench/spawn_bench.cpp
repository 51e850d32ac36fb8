/// hearth-spawn-bench: the cost of starting the same trivial command (/bin/true) in different
/// ways, measured in one run, interleaved round-robin so that machine noise hits every variant
/// alike. Each sample is posix_spawn() to waitpid() of the whole thing.
///
///   bare          posix_spawn of /bin/true
///   launcher      hearth-launch without --jail (the baseline every child had before the jail)
///   jail          hearth-launch --jail with everything on: user/pid/mount/ipc/uts/network
///                 namespaces, Landlock (files, network, scoping), seccomp, rlimits, a private
///                 /tmp, a cover over a negated path, and memory + pids cgroups when writable
///   jail-proxy    the same with networkAccess as a host list: loopback up and a listener handed
///                 to the parent over the control socket
///   jail-warm     the jail variant built ahead (--exec-on-request): timed from the "exec"
///                 message, once the launcher reported "ready", to waitpid(): what a call costs
///                 in a warm jail
///   bwrap         bwrap --unshare-all --die-with-parent with /usr, /lib*, /bin bound read-only
///
/// Usage: hearth-spawn-bench [--iterations N] [--launcher PATH] [--bwrap PATH]
///        hearth-spawn-bench --print-filter none|proxy|host   (the daemon's precompiled filter)
///        hearth-spawn-bench --namespaces   (clone() cost of each namespace kind, 200 each)
/// Prints a JSON object per variant: {"variant", "n", "p50_us", "p90_us", "p99_us", "mean_us"}.

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jail/control.hpp"
#include "jail/sandbox.hpp"

extern char** environ;

namespace {

struct Variant {
  Variant(std::string n, std::vector<std::string> a, bool c = false, bool w = false)
      : name(std::move(n)), argv(std::move(a)), control(c), warm(w) {}
  std::string name;
  std::vector<std::string> argv;
  bool control = false;  ///< pass a control socket as fd 4 (and drain it)
  bool warm = false;     ///< spawned untimed; timed from the exec message
  std::vector<double> samples;
};

/// The cgroup v1 folder of `controller` for this process, when it is writable; else empty.
std::string writable_cgroup(const std::string& controller) {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (line.substr(a + 1, b - a - 1) != controller) continue;
    std::string dir = "/sys/fs/cgroup/" + controller + line.substr(b + 1);
    if (dir.back() == '/') dir.pop_back();
    dir += "/hearth-bench-" + std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
  }
  return {};
}

double run_once(Variant& v) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  hearth::FdPair fds;
  if (v.control) {
    hearth::open_socket_pair(fds, SOCK_SEQPACKET | SOCK_CLOEXEC);
    posix_spawn_file_actions_adddup2(&actions, fds[1].get(), 4);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<char*> argv;
  for (auto& a : v.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  int status = 0;
  if (rc == 0 && v.warm) {
    // Built ahead: wait for the jail's "ready", then time the call from its exec message.
    for (;;) {
      auto message = hearth::jail::receive_message(fds[0].get(), /*wait=*/true);
      if (!message || message->text == "ready") break;
    }
    const std::string spec = hearth::jail::encode_exec({"true"}, {"PATH=/usr/bin:/bin"});
    hearth::Fd memfd(::memfd_create("bench-exec", MFD_CLOEXEC));
    if (::write(memfd.get(), spec.data(), spec.size()) != static_cast<ssize_t>(spec.size())) {
      std::fprintf(stderr, "cannot write the exec message\n");
      std::exit(1);
    }
    start = std::chrono::steady_clock::now();
    hearth::jail::send_message(fds[0].get(), "exec", memfd.get());
  }
  if (rc == 0) {
    while (::waitpid(pid, &status, 0) < 0) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (v.control) {
    // The listener the jail handed over (proxy mode), and any report.
    // Each message's descriptor closes with it; the pair closes at the end of this function.
    while (hearth::jail::receive_message(fds[0].get(), /*wait=*/false)) {
    }
  }
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s failed (spawn %d, status %d)\n", v.name.c_str(), rc, status);
    std::exit(1);
  }
  return std::chrono::duration<double, std::micro>(end - start).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

}  // namespace

/// Median cost of clone() + exit + wait with each namespace flag added in turn.
void namespace_costs() {
  struct Step {
    const char* name;
    unsigned long flags;
  };
  const Step steps[] = {{"plain", 0},
                        {"user", CLONE_NEWUSER},
                        {"user+pid", CLONE_NEWUSER | CLONE_NEWPID},
                        {"user+mount", CLONE_NEWUSER | CLONE_NEWNS},
                        {"user+ipc", CLONE_NEWUSER | CLONE_NEWIPC},
                        {"user+uts", CLONE_NEWUSER | CLONE_NEWUTS},
                        {"user+network", CLONE_NEWUSER | CLONE_NEWNET},
                        {"all six", CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
                                        CLONE_NEWUTS | CLONE_NEWNET}};
  for (const auto& step : steps) {
    std::vector<double> samples;
    for (int i = 0; i < 200; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const long pid =
          ::syscall(SYS_clone, step.flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
      if (pid == 0) ::_exit(0);
      if (pid < 0) {
        std::printf("{\"clone\":\"%s\",\"error\":\"%s\"}\n", step.name, std::strerror(errno));
        break;
      }
      ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
      samples.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    if (!samples.empty())
      std::printf("{\"clone\":\"%s\",\"p50_us\":%.0f}\n", step.name, percentile(samples, 0.5));
  }
}

int main(int argc, char** argv) {
  using hearth::jail::NetMode;
  using hearth::jail::sandbox::export_seccomp;
  if (argc == 3 && std::string(argv[1]) == "--print-filter") {
    const std::string mode = argv[2];
    std::printf("%s\n", export_seccomp(mode == "host"    ? NetMode::kHost
                                       : mode == "proxy" ? NetMode::kProxy
                                                         : NetMode::kNone)
                            .c_str());
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--namespaces") {
    namespace_costs();
    return 0;
  }
  int iterations = 300;
  std::string launcher =
      (std::filesystem::canonical("/proc/self/exe").parent_path() / "hearth-launch").string();
  std::string bwrap = "/usr/bin/bwrap";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iterations") iterations = std::atoi(argv[i + 1]);
    if (flag == "--launcher") launcher = argv[i + 1];
    if (flag == "--bwrap") bwrap = argv[i + 1];
  }

  // A scratch service folder for the jail's rules.
  char dir_template[] = "/var/tmp/hearth-spawn-bench-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  std::filesystem::create_directories(dir + "/data");
  std::ofstream(dir + "/data/secret.json") << "{}";
  const std::string memory = writable_cgroup("memory");
  const std::string pids = writable_cgroup("pids");

  std::vector<std::string> jail = {launcher,
                                   "--jail",
                                   "--rw=" + dir + "/data",
                                   "--hide=" + dir + "/data/secret.json",
                                   "--as=1073741824",
                                   "--nproc=256",
                                   "--tmp=67108864",
                                   "--control-fd=4"};
  if (!memory.empty()) {
    jail.push_back("--memory=1073741824");
    jail.push_back("--cgroup-memory=" + memory);
  }
  if (!pids.empty()) jail.push_back("--cgroup-pids=" + pids);
  auto with = [](std::vector<std::string> base, std::vector<std::string> more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
  };

  std::vector<Variant> variants;
  variants.emplace_back(Variant{"bare", {"/bin/true", "true"}});
  variants.emplace_back(Variant{"launcher", {launcher, "--", "/bin/true", "true"}});
  // The filter precompiled, as the daemon passes it.
  variants.emplace_back(
      Variant{"jail",
              with(jail, {"--net=none", "--seccomp-bpf=" + export_seccomp(NetMode::kNone), "--",
                          "/bin/true", "true"}),
              true});
  variants.emplace_back(Variant{
      "jail-warm",
      with(jail, {"--net=none", "--exec-on-request",
                  "--seccomp-bpf=" + export_seccomp(NetMode::kNone), "--", "/bin/true", "true"}),
      true, true});
  variants.push_back({"jail-proxy",
                      with(jail, {"--net=proxy", "--seccomp-bpf=" + export_seccomp(NetMode::kProxy),
                                  "--", "/bin/true", "true"}),
                      true});
  if (::access(bwrap.c_str(), X_OK) == 0) {
    std::vector<std::string> b = {bwrap,   "--unshare-all", "--die-with-parent", "--proc", "/proc",
                                  "--dev", "/dev"};
    for (const char* p : {"/usr", "/bin", "/lib", "/lib64"}) {
      if (::access(p, F_OK) == 0) {
        b.push_back("--ro-bind");
        b.push_back(p);
        b.push_back(p);
      }
    }
    b.push_back("/bin/true");
    variants.emplace_back(Variant{"bwrap", b});
  }

  for (int warm = 0; warm < 10; ++warm)
    for (auto& v : variants) run_once(v);
  for (int i = 0; i < iterations; ++i)
    for (auto& v : variants) v.samples.push_back(run_once(v));

  const double bare_p50 = percentile(variants[0].samples, 0.5);
  for (const auto& v : variants) {
    double sum = 0;
    for (double s : v.samples) sum += s;
    std::printf(
        "{\"variant\":\"%s\",\"n\":%zu,\"p50_us\":%.0f,\"p90_us\":%.0f,\"p99_us\":%.0f,"
        "\"mean_us\":%.0f,\"p50_over_bare_us\":%.0f}\n",
        v.name.c_str(), v.samples.size(), percentile(v.samples, 0.5), percentile(v.samples, 0.9),
        percentile(v.samples, 0.99), sum / static_cast<double>(v.samples.size()),
        percentile(v.samples, 0.5) - bare_p50);
  }
  std::printf("{\"cgroups\":{\"memory\":%s,\"pids\":%s}}\n", memory.empty() ? "false" : "true",
              pids.empty() ? "false" : "true");
  if (!memory.empty()) ::rmdir(memory.c_str());
  if (!pids.empty()) ::rmdir(pids.c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
