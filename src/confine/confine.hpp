#pragma once
/// Confinement: what the daemon keeps next to one jailed child process. Every handler kind that
/// starts processes goes through it (script handlers now; JS workers and MCP servers later).
///
/// - Turns the endpoint's LAVS permissions into a jail plan (fail closed: -32001 naming the
///   missing mechanism) and adds it to the proc::Command (launcher options, control socket as
///   fd 4, proxy variables).
/// - Listens on the control socket: the launcher hands over the listening socket of the jail's
///   network namespace (networkAccess lists), which is then served by an egress::Proxy allowing
///   only the listed hosts; it reports a memory cgroup OOM kill and mechanisms that failed.
/// - After the child ended: the verdict that replaces the run's own outcome (-32001 for a
///   mechanism that failed at launch, -32003 "memory limit exceeded" with data
///   {reason: "memory-limit", maxMemory}), then clean-up (proxy stopped, the launch's cgroups
///   removed). Programs tell a memory limit by that `reason`, never by the message.

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "jail/jail.hpp"
#include "permissions/permissions.hpp"
#include "proc/process.hpp"

namespace hearth::confine {

/// Room a kind adds to the jail's memory limits for what its process needs besides the handler's
/// own work (a JS engine's reserved address space and its baseline), in bytes.
struct ConfineExtras {
  std::uint64_t address_space = 0;  ///< added to RLIMIT_AS
  std::uint64_t memory = 0;         ///< added to the memory cgroup's limit
  /// A warm jail: the launcher builds the jail, then waits for release() before it starts the
  /// program (with release()'s arguments and environment, not `cmd`'s).
  bool exec_on_request = false;
};

class Confinement {
 public:
  /// Plans the jail for `cmd` (its program, cwd and `raw_args`: the manifest's arguments before
  /// placeholder expansion, so that input never widens what the jail allows) under `permissions`
  /// of `service_dir`, and amends `cmd`. `who` names the endpoint in logs ("service.endpoint").
  static Result<std::shared_ptr<Confinement>> start(const jail::Jail& jail,
                                                    const permissions::Permissions& permissions,
                                                    const std::filesystem::path& service_dir,
                                                    const std::vector<std::string>& raw_args,
                                                    proc::Command& cmd,
                                                    const boost::asio::any_io_executor& executor,
                                                    std::string who, ConfineExtras extras = {});

  ~Confinement();
  Confinement(const Confinement&) = delete;
  Confinement& operator=(const Confinement&) = delete;

  /// What a jail planned now for these arguments (as start() takes them) would be: the launcher's
  /// options and the identity (device, inode) of every path they name. A warm jail whose
  /// fingerprint() differs was planned against a filesystem that has changed since (a file a
  /// negated pattern hides added, removed or replaced, a folder made again: its covers and rules
  /// are tied to what existed then) and must not take a call.
  static Result<std::string> plan_fingerprint(const jail::Jail& jail,
                                              const permissions::Permissions& permissions,
                                              const std::filesystem::path& service_dir,
                                              const std::vector<std::string>& raw_args,
                                              const proc::Command& cmd, ConfineExtras extras = {});
  /// The fingerprint of this jail's plan, taken when it was made (start()).
  const std::string& fingerprint() const { return fingerprint_; }

  /// A warm jail's call (started with ConfineExtras::exec_on_request): hands the launcher waiting
  /// in the jail the program's argv (argv[0] included) and environment; the jail's own variables
  /// (the proxy's) are added to `env`. Once per jail.
  Status release(const std::vector<std::string>& argv, std::vector<std::string> env);

  /// Once the child has exited: reads what the launcher reported, stops the proxy, removes the
  /// launch's cgroups, and returns the error to report instead of the run's own outcome, if any.
  std::optional<Error> finish(const proc::RunResult& result);

  /// Closes the control socket and stops the proxy (a warm jail still waiting for release() then
  /// exits by itself). finish() still gives the verdict afterwards.
  void close();

  /// Clean-up when the run's result is not known (a stream stopped by the daemon).
  void abandon(int launcher_pid);

  bool confined() const { return confined_; }

  struct State;

 private:
  Confinement() = default;
  std::shared_ptr<State> state_;
  const jail::Jail* jail_ = nullptr;
  bool confined_ = false;
  std::optional<std::uint64_t> max_memory_;
  std::vector<std::string> jail_env_;  ///< the plan's variables, for release()
  std::string fingerprint_;
};

/// A long-lived child that speaks over its stdin and stdout (a stdio MCP server, an Agent App
/// backend), under the jail when `jail` is given. `launch` starts it with the callbacks it is
/// given, once: make another ConfinedStdio for each start, since each start needs a jail of its
/// own. `verdict` replaces the exit's own explanation when the jail has one (a mechanism that
/// failed, the memory limit). A child stopped through the Duplex releases its jail.
struct ConfinedStdio {
  std::function<Result<std::shared_ptr<proc::Duplex>>(proc::Duplex::Callbacks)> launch;
  std::function<std::optional<Error>(const proc::RunResult&)> verdict;
};

/// Plans the jail for `cmd` (as Confinement::start) and returns how to start it. Without a jail
/// (the daemon's --insecure-no-sandbox) the child runs as it is.
Result<ConfinedStdio> confined_stdio(const jail::Jail* jail,
                                     const permissions::Permissions& permissions,
                                     const std::filesystem::path& service_dir,
                                     const std::vector<std::string>& raw_args, proc::Command cmd,
                                     const boost::asio::any_io_executor& executor, std::string who);

/// The environment a handler process starts from, never the daemon's: PATH (the system's
/// folders), LANG=C.UTF-8, HOME = the service folder, LAVS_SERVICE and LAVS_SERVICE_DIR. Kinds add
/// their own variables to it, then turn it into "KEY=VALUE" entries with environment_entries().
using Environment = std::map<std::string, std::string, std::less<>>;
Environment base_environment(const std::string& service, const std::filesystem::path& dir);
std::vector<std::string> environment_entries(const Environment& vars);

/// How a long-lived child ended, for an error message ("was killed by signal 9", "exited with
/// code 3"), with `data` given {signal} or {exitCode}.
std::string ended_how(const proc::RunResult& result, json::object& data);

/// The last 4 KiB of a child's stderr, as valid UTF-8, for an error's data.
std::string stderr_excerpt(std::string_view stderr_tail);

/// True when a failed run's stderr says it ran out of memory (Python's MemoryError, the C
/// library's ENOMEM text, V8's and C++'s allocation failures...). Exposed for tests.
bool looks_out_of_memory(std::string_view stderr_tail);

}  // namespace hearth::confine
