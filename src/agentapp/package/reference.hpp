#pragma once
/// The Agent App format's six package-reading commands, behaviour-compatible with its reference
/// CLI (`agentapp-ref` 0.10.0): `validate`, `read-properties`, `to-catalog`, `project`,
/// `readiness` and `migrate-check` give the same JSON (keys, order, values, number formatting)
/// and exit codes on any package, the reference tool's quirks included (docs/agent-apps.md,
/// "Reference compatibility", lists them). They read; nothing of the package runs.

#include <optional>
#include <string>
#include <string_view>

#include "json/json.hpp"

namespace hearth::agentapp {

enum class ReferenceCommand {
  kValidate,
  kReadProperties,
  kToCatalog,
  kProject,
  kReadiness,
  kMigrateCheck,
};

/// The command named `name` ("validate", ...), or nullopt.
std::optional<ReferenceCommand> reference_command(std::string_view name);

struct ReferenceOptions {
  /// `--version` (validate) or `--target` (migrate-check): either is read by both, `--version`
  /// first, as the reference CLI does.
  std::optional<std::string> version;
  std::optional<std::string> target;
  /// `--workspace` (readiness).
  std::optional<std::string> workspace;
};

struct ReferenceAnswer {
  /// What the command prints on stdout (JSON.stringify(value, null, 2) and a newline); empty
  /// when it fails with exit code 2.
  std::string text;
  /// The printed value (null when none).
  json::value value;
  /// 0, 1 when the printed object has `"ok": false`, 2 when the command failed (`message`).
  int exit_code = 0;
  std::string message;
};

/// Runs `command` on the package folder `app_path` (relative to the working directory, as
/// given on the command line; empty means missing).
ReferenceAnswer run_reference(ReferenceCommand command, std::string_view app_path,
                              const ReferenceOptions& options);

/// `--version` / `--target` as the reference CLI normalises them: "0.N" and "0.N.x" become
/// "0.N.0" for N = 3..10; anything else is kept.
std::string normalise_version_flag(std::string_view raw);

}  // namespace hearth::agentapp
