#pragma once
/// The mechanisms `hearth-launch` applies to the processes it confines (launcher side only; the
/// daemon never calls these). Each returns nullopt on success or a Failure naming the mechanism,
/// so that the daemon can tell the caller which one is missing (fail closed).
///
/// Process layout of a confined launch (see src/jail/launcher.cpp for the order of steps):
///
///   hearth (daemon) --posix_spawn--> L: hearth-launch, the supervisor, outside every namespace
///     L --clone(NEWUSER|NEWPID|NEWNS|NEWIPC|NEWUTS[|NEWNET])--> C: pid 1 of the jail, its init
///       C --fork--> G: drops privileges, Landlock + seccomp, execve(PROGRAM)
///
/// L writes C's uid/gid maps, moves C into the jail's cgroups, builds the Landlock ruleset (while
/// C mounts) and hands it over, waits for C and reports the outcome; C sets up mounts and the
/// network, reaps, and its exit takes every process of the pid namespace with it.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.hpp"
#include "jail/launch_options.hpp"

namespace hearth::jail::sandbox {

struct Failure {
  std::string mechanism;  ///< "landlock", "seccomp", "user namespace", ...
  std::string detail;
};
using Outcome = std::optional<Failure>;

/// The Landlock ABI the kernel offers; 0 when Landlock is unavailable (disabled or too old).
int landlock_abi();

/// Restricts the calling thread and its future children to the rules of `options` (read-execute
/// system folders, the given paths, devices, /proc, network rules by `options.net`, signal and
/// abstract-socket scoping), plus `scratch` read-write (see setup_mounts; empty: none). Requires
/// no_new_privs. Paths that do not exist are skipped.
Outcome apply_landlock(const LaunchOptions& options, int abi, const std::string& scratch);

/// apply_landlock() in two steps, so that the launcher can build the rules while the jail's init
/// sets up its mounts: landlock_ruleset() (any process that sees the same files: rules are on
/// inodes, and the jail's bind mounts share them) makes a ruleset with every rule but the jail's
/// own /proc and scratch folder; landlock_restrict() (in the program's process) adds those two
/// and restricts the calling thread, closing `ruleset`. No ruleset, and `result` set, on failure.
Fd landlock_ruleset(const LaunchOptions& options, int abi, Outcome& result);
Outcome landlock_restrict(Fd ruleset, int abi, const std::string& scratch);

/// Loads the seccomp filter: refuses ptrace, mount and the new mount API, namespaces, kexec,
/// modules, bpf, perf_event_open, keyring calls, io_uring, TIOCSTI/TIOCLINUX, process_vm_*, and
/// unix sockets (socket(AF_UNIX) always; socketpair() except AF_UNIX SOCK_STREAM/SOCK_SEQPACKET),
/// and other socket families (but AF_INET/AF_INET6 in proxy mode; all in host mode).
/// `precompiled_hex`: the same filter as export_seccomp() gives, loaded as is (no libseccomp
/// work at launch); empty: build it here.
Outcome apply_seccomp(NetMode net, std::string_view precompiled_hex = {});

/// The filter for `net` as classic BPF, hex-encoded, for --seccomp-bpf; empty on failure.
std::string export_seccomp(NetMode net);

/// Inside the new mount namespace, in two steps. The first needs only the namespace's
/// capabilities (it may run before the id maps are written): private propagation and a fresh
/// /proc for the new pid namespace. The second: a private /tmp of tmp_size bytes (what the jail
/// needs below the host's /tmp - a service folder there, the working directory - is bound back at
/// the same path) and the --hide covers. `scratch` receives the writable temporary folder: /tmp,
/// or /tmp/.hearth-tmp when something was bound back (a rule on /tmp would then reach into it).
Outcome setup_proc(const LaunchOptions& options);
Outcome setup_mounts(const LaunchOptions& options, std::string& scratch);

/// Brings up the loopback interface of the (new) network namespace.
Outcome loopback_up();

/// A listening TCP socket on 127.0.0.1:port of the current network namespace; none with `error`.
Fd open_listener(std::uint16_t port, std::string& error);

/// Writes uid_map/gid_map of `child` (in a new user namespace): inside 0 is `uid` (the launcher's
/// own ids when it is not root). When `jail_uid` is set (root launcher), 0 stays 0 and `jail_uid`
/// maps to itself: the program runs as that unprivileged id, and root-owned files keep an owner
/// the jail can name (see drop_privileges).
Outcome write_id_maps(pid_t child, std::optional<std::uint32_t> jail_uid,
                      std::optional<std::uint32_t> jail_gid);

/// In G, before execve: with a jail uid (root launcher), switch to it keeping only
/// CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH in the jail's user namespace (as ambient
/// capabilities: Landlock, not file modes, then decides what is reachable); otherwise stay
/// uid 0 of the namespace with no capability at all. Either way the bounding set is emptied and
/// the securebits locked (no root semantics at exec, no ambient raise).
Outcome drop_privileges(std::optional<std::uint32_t> jail_uid,
                        std::optional<std::uint32_t> jail_gid);

/// Resource limits of the program: RLIMIT_AS, RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_CORE = 0.
Outcome apply_rlimits(const LaunchOptions& options);

/// The per-launch cgroup v1 groups (memory, pids) created under the folders the daemon named.
class Cgroups {
 public:
  /// Creates `<dir>/j<pid of the caller>` for each configured controller, writes the limits and
  /// moves `member` (the jail's init, before it starts anything) into them.
  Outcome create(const LaunchOptions& options, pid_t member);
  /// True when the memory group recorded an OOM kill.
  bool oom_killed() const;
  /// Removes the groups (empty once the jail has ended). Idempotent.
  void remove();

 private:
  std::string memory_;
  std::string pids_;
};

/// The mechanisms this machine offers, one JSON object a line:
/// {"mechanism":"landlock","ok":true,"detail":"ABI 7"}. Each is tried for real in a child process.
void probe(const LaunchOptions& options);

}  // namespace hearth::jail::sandbox
