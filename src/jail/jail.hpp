#pragma once
/// The daemon's side of the jail: which mechanisms this machine offers, and the launcher policy
/// for one handler process, built from the LAVS permissions of its endpoint.
///
/// Fail closed: a policy that needs a mechanism the machine lacks is refused (-32001, naming the
/// mechanism), unless the daemon runs with --insecure-no-sandbox, in which case handlers run with
/// the baseline only (no-new-privs, no core dumps, parent-death signal) and every call is logged
/// as unconfined.
///
/// How fileAccess globs become Landlock rules (Landlock rules are folder trees or single files):
/// - a pattern without wildcards names one path: a rule on it when it exists (a file or a whole
///   folder); when it does not exist yet, a rule on its parent folder (so it can be created) -
///   which also opens that folder's other files;
/// - a pattern with wildcards: a rule on the folder its literal prefix names (`data/**/*.json` ->
///   `data/`), when that folder exists; everything beneath it is then reachable by the handler;
/// - a negated pattern (`!data/secret.json`): every existing path it matches (searched below the
///   literal prefix, the prefix folder itself included, at most kMaxHideScan entries) is covered
///   by an empty read-only object in the jail's mount namespace; a matched folder is covered
///   whole, as GlobSet::excluded() excludes everything beneath it. A covered path is a mount
///   point in the jail: it cannot be renamed, removed, replaced or hard-linked (EBUSY, EXDEV);
/// - the folders above a covered path, from the service folder down, are not granted whole:
///   renaming one would carry the covered content to a name no negation matches, readable at the
///   next launch. A pattern that grants such a folder grants it without Landlock REMOVE_DIR
///   (`keep`: its files can be created, written, removed and renamed - atomic saves work - but no
///   folder in it can be removed, renamed or moved away), and each of its sub-folders that holds
///   nothing covered gets a full rule of its own (symbolic links get none). Folders the handler
///   creates later in a kept folder inherit its rights;
/// - hearth's own reads and writes on a handler's behalf (lavs/readFile, ctx.readFile later) check
///   the exact glob set, which is stricter than the rules above.
/// Rules are read-write without execute. The handler's own code is read-execute: the folder of
/// the program when it lies in the service folder, and of each argument naming an existing file
/// there (a folder argument: that folder) - so a script's sibling modules load; a script at the
/// service root makes the root readable (not writable). Arguments filled from input
/// (`{{...}}`) never count. System folders (/usr, /lib..., a short list of /etc files) are
/// read-execute or read-only; a private /tmp is read-write.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/result.hpp"
#include "egress/network_policy.hpp"
#include "jail/launch_options.hpp"

namespace hearth::jail {

/// One mechanism as `hearth-launch --probe` found it.
struct Mechanism {
  std::string name;  ///< "landlock", "seccomp", "user namespace", "memory cgroup", ...
  bool ok = false;
  std::string detail;
};

struct Capabilities {
  std::vector<Mechanism> mechanisms;
  const Mechanism* find(std::string_view name) const;
  bool has(std::string_view name) const;
};

/// What a handler process is allowed, in LAVS terms.
struct Request {
  std::filesystem::path service_dir;  ///< absolute, canonical
  std::optional<std::vector<std::string>> file_access;
  /// absent or false: none; true: host network; a non-empty list: through the allowlisting proxy
  std::optional<egress::NetworkPolicy> network_access;
  std::optional<std::uint64_t> max_memory;
  /// Added to max_memory for RLIMIT_AS and for the memory cgroup (an engine's reservations and
  /// baseline, which the handler's own data limit should not count).
  std::uint64_t address_space_extra = 0;
  std::uint64_t memory_extra = 0;
  std::filesystem::path program;  ///< absolute
  std::vector<std::string> args;  ///< the arguments after argv[0]
};

/// The launcher options for one process, and what the caller must provide alongside.
struct Plan {
  bool confined = false;          ///< false only with --insecure-no-sandbox
  LaunchOptions options;          ///< control_fd is set by the caller
  egress::AllowList proxy_allow;  ///< what the proxy allows when options.net == kProxy
  std::vector<std::string> env;   ///< extra environment ("KEY=VALUE": the proxy variables)
};

struct JailOptions {
  std::filesystem::path launcher;
  bool insecure_no_sandbox = false;
  std::uint32_t max_tasks = 256;                 ///< processes and threads of one jail
  std::uint64_t tmp_size = 64ULL * 1024 * 1024;  ///< private /tmp
  std::uint16_t proxy_port = 3128;
};

class Jail {
 public:
  /// Probes the machine (runs the launcher once) and prepares the cgroup folders. Start-up only.
  static Result<Jail> create(JailOptions options);
  /// For tests: a jail with the given capabilities, without probing.
  Jail(JailOptions options, Capabilities capabilities);
  Jail(Jail&&) noexcept;
  Jail& operator=(Jail&&) noexcept;
  ~Jail();

  const Capabilities& capabilities() const { return capabilities_; }
  const JailOptions& options() const { return options_; }
  bool insecure() const { return options_.insecure_no_sandbox; }

  /// The policy for `request`; kPermissionDenied when a mechanism it needs is missing.
  Result<Plan> plan(const Request& request) const;

  /// Removes what a finished launch left in the cgroup folders (the launcher normally does it;
  /// a launcher killed at a time limit cannot). Safe from any thread.
  void cleanup(int launcher_pid) const;

  /// Mechanisms a request needs, in the order they are checked.
  static std::vector<std::string> required_mechanisms(const Request& request);

 private:
  JailOptions options_;
  Capabilities capabilities_;
  std::string cgroup_memory_;  ///< our folder in the memory hierarchy, empty when unusable
  std::string cgroup_pids_;
  std::string seccomp_[3];  ///< precompiled filters by NetMode (none, proxy, host)
};

/// The rules for fileAccess globs (see the file comment): paths to allow read-write and paths to
/// cover. Exposed for tests.
struct FileRules {
  std::vector<std::string> read_write;
  /// Folders above a covered entry (from the service folder down) that a pattern grants:
  /// read-write without REMOVE_DIR (LaunchOptions::read_write_keep).
  std::vector<std::string> keep;
  std::vector<std::string> hide;
};
FileRules file_rules(const std::filesystem::path& service_dir,
                     const std::vector<std::string>& patterns);

/// How many entries a negated pattern's search may visit before the request is refused.
constexpr std::size_t kMaxHideScan = 10000;

}  // namespace hearth::jail
