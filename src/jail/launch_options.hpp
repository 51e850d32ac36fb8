#pragma once
/// The policy the daemon hands to `hearth-launch`, as command-line options.
///
/// Both sides use this one definition: the daemon builds a LaunchOptions and calls to_args(); the
/// launcher calls parse() on its argv. Every option is one argv element of the form `--name=value`
/// or `--name`, and options end at a lone `--`, after which come PROGRAM ARGV0 [ARG...]. An unknown
/// option is an error: a launcher older than its daemon must refuse a restriction it does not know
/// rather than run without it.
///
///   --parent=PID        the pid the launcher's parent must have (the daemon)
///   --jail              confine the program (everything below); without it only the baseline
///                       applies: parent-death signal, no-new-privs, no core dumps
///   --uid=N --gid=N     the (outside) ids the program runs as; only a root launcher may choose,
///                       otherwise its own ids are used
///   --rx=PATH           read and execute beneath PATH (a folder or a file)
///   --ro=PATH           read beneath PATH
///   --rw=PATH           read, write, create, rename and remove beneath PATH (no execute)
///   --rw-keep=PATH      as --rw, but no folder in PATH or its sub-folders can be removed,
///                       renamed or moved away (Landlock REMOVE_DIR withheld): the folders above
///                       a --hide path, so that it cannot be moved out from under its cover
///   --hide=PATH         cover PATH with an empty read-only object (negated fileAccess entries)
///   --net=none|proxy|host
///   --proxy-port=N      proxy mode: the loopback port of the in-jail listener (default 3128)
///   --control-fd=N      a SOCK_SEQPACKET socket to the daemon: the proxy listener and the
///                       outcome (memory limit hit, a mechanism that failed) travel on it
///   --as=BYTES          RLIMIT_AS of the program
///   --memory=BYTES      memory cgroup limit of the whole jail (with --cgroup-memory)
///   --nproc=N           tasks the jail may have (RLIMIT_NPROC in its user namespace, and
///                       pids.max with --cgroup-pids)
///   --nofile=N          RLIMIT_NOFILE
///   --tmp=BYTES         a private tmpfs of that size on /tmp (0: none)
///   --cgroup-memory=DIR --cgroup-pids=DIR
///                       cgroup v1 folders under which the launcher creates the jail's group
///   --seccomp-bpf=HEX   the seccomp filter, precompiled by the daemon (sandbox::export_seccomp);
///                       without it the launcher builds the same filter itself (slower)
///   --probe             print which mechanisms work on this machine (JSON lines) and exit

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::jail {

enum class NetMode { kNone, kProxy, kHost };

std::string_view to_string(NetMode mode);

struct LaunchOptions {
  pid_t parent = -1;
  bool jail = false;
  bool probe = false;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  std::vector<std::string> read_exec;
  std::vector<std::string> read_only;
  std::vector<std::string> read_write;
  std::vector<std::string> read_write_keep;
  std::vector<std::string> hide;
  NetMode net = NetMode::kNone;
  std::uint16_t proxy_port = 3128;
  int control_fd = -1;
  /// A warm jail: everything is set up ahead of the call, then the jail waits for the call's
  /// arguments and environment on the control socket (an "exec" message, see control.hpp) before
  /// it starts the program. Needs control_fd.
  bool exec_on_request = false;
  std::uint64_t address_space = 0;  ///< 0: unlimited
  std::uint64_t memory = 0;         ///< 0: no cgroup limit
  std::uint32_t nproc = 0;          ///< 0: unlimited
  std::uint32_t nofile = 0;         ///< 0: inherited
  std::uint64_t tmp_size = 0;       ///< 0: no private /tmp
  std::string cgroup_memory;
  std::string cgroup_pids;
  std::string seccomp_bpf;  ///< hex

  /// The options (not the program), in the order parse() reads them; `--parent` included when set.
  std::vector<std::string> to_args() const;
};

struct ParsedLaunch {
  LaunchOptions options;
  int program_index = 0;  ///< argv index of PROGRAM (ARGV0 follows); argc when absent
};

/// Parses argv[1..]. On failure returns nullopt and sets `error` to a message naming the option.
/// (No Result<>/JSON here: the launcher links nothing it does not need, for a fast start.)
std::optional<ParsedLaunch> parse_launch_args(int argc, const char* const* argv,
                                              std::string& error);

}  // namespace hearth::jail
