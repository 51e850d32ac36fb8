#pragma once
/// Which of an app's declared services hearth runs, and how (docs/agent-apps.md, "App
/// backends"): `app-backend` services on the `client-local` plane speaking `stdio-jsonrpc`. The
/// rest are listed with the reason hearth does not run them, for readiness and the review. Only
/// reads the manifest and the package's files; starting the processes is the supervisor's
/// (src/agentapp/backend).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "json/json.hpp"

namespace hearth::agentapp {

struct BackendService {
  std::string key;
  bool required = false;
  /// The command line (`command` and `args` as MCP server configurations write them, or the
  /// file `binary`, `path` or `entry` names): argv[0] is a program name (looked up in the
  /// system's folders) or an absolute path; package files among the arguments, written
  /// relative to the package folder, are absolute paths.
  std::vector<std::string> argv;
  /// The package file the command runs (a script read by its interpreter), empty when the
  /// command is a system program with arguments of its own.
  std::filesystem::path script;
  /// `network` as declared (default deny-by-default) and, for remote-allowed, the hosts of the
  /// app's network permissions (their `domains`).
  std::string network = "deny-by-default";
  std::vector<std::string> hosts;
  std::optional<std::uint64_t> memory_bytes;       ///< resourceLimits.memoryMb
  std::chrono::milliseconds call_timeout{30'000};  ///< resourceLimits.timeoutMs
  std::vector<std::string> capabilities;           ///< requiredCapabilities
};

struct BackendPlan {
  std::vector<BackendService> run;
  struct NotRun {
    std::string key;
    bool required = false;
    std::string reason;
  };
  std::vector<NotRun> not_run;
};

/// The app-backend services of `front_matter` (the package in `package`, canonical).
BackendPlan plan_backends(const json::object& front_matter, const std::filesystem::path& package);

/// App code hearth runs in its JS workers, one call at a time: `worker` services that declare a
/// JavaScript runtime (`language` or `runtime` javascript/js/node) and workflows whose `entry`
/// is a JavaScript module. Each is called by its key; a call runs an exported function.
struct JsUnit {
  std::string key;
  std::string kind;    ///< "worker" or "workflow"
  std::string module;  ///< relative to the package, normalised
  std::string network = "deny-by-default";
  std::vector<std::string> hosts;
  std::optional<std::uint64_t> memory_bytes;
  std::chrono::milliseconds call_timeout{30'000};
};

struct JsPlan {
  std::vector<JsUnit> run;
  std::vector<BackendPlan::NotRun> not_run;
};

JsPlan plan_js_units(const json::object& front_matter, const std::filesystem::path& package);

}  // namespace hearth::agentapp
