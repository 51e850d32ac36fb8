// `hearth app`: Agent App packages (docs/agent-apps.md). The six reading commands answer as the
// format's reference CLI does (with --json, byte for byte; without it, a summary for people).
#include <CLI/CLI.hpp>
#include <iostream>

#include "agentapp/package/reference.hpp"

namespace hearth::cli {

namespace {

struct AppArgs {
  std::string dir;
  bool json = false;
  std::string version;
  std::string target;
  std::string workspace;
  bool has_version = false;
  bool has_target = false;
  bool has_workspace = false;
};

std::string text_of(const json::value* v) {
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

/// The summary printed without --json: status, then one line per finding, check or gap.
void print_summary(agentapp::ReferenceCommand command, const json::object& out) {
  const auto* app = out.if_contains("app");
  const auto* status = out.if_contains("status");
  std::cout << text_of(app) << ": " << text_of(status);
  if (command == agentapp::ReferenceCommand::kMigrateCheck) {
    std::cout << " (" << text_of(out.if_contains("sourceVersion")) << " -> "
              << text_of(out.if_contains("targetVersion")) << ")";
  }
  std::cout << "\n";
  const auto list = [&out](std::string_view key) -> const json::array* {
    const auto* v = out.if_contains(key);
    return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
  };
  if (const auto* findings = list("findings")) {
    for (const auto& f : *findings) {
      const auto& o = f.get_object();
      std::cout << "  " << text_of(o.if_contains("severity")) << " "
                << text_of(o.if_contains("path")) << ": " << text_of(o.if_contains("message"))
                << "\n";
    }
  }
  if (const auto* checks = list("checks")) {
    for (const auto& c : *checks) {
      const auto& o = c.get_object();
      std::cout << "  " << text_of(o.if_contains("severity")) << " "
                << text_of(o.if_contains("kind")) << " " << text_of(o.if_contains("key")) << ": "
                << text_of(o.if_contains("message")) << "\n";
    }
  }
  if (const auto* gaps = list("gaps")) {
    for (const auto& g : *gaps) {
      const auto& o = g.get_object();
      std::cout << "  gap " << text_of(o.if_contains("field")) << ": "
                << text_of(o.if_contains("suggestion")) << "\n";
    }
  }
  if (const auto* hash = out.if_contains("manifestHash")) {
    std::cout << "manifestHash " << text_of(hash) << "\n";
  }
}

int run_reference(agentapp::ReferenceCommand command, const AppArgs& args) {
  agentapp::ReferenceOptions options;
  if (args.has_version) options.version = args.version;
  if (args.has_target) options.target = args.target;
  if (args.has_workspace) options.workspace = args.workspace;
  const auto answer = agentapp::run_reference(command, args.dir, options);
  if (answer.exit_code == 2) {
    std::cerr << answer.message << "\n";
    return 2;
  }
  const bool summary = !args.json && answer.value.is_object() &&
                       (command == agentapp::ReferenceCommand::kValidate ||
                        command == agentapp::ReferenceCommand::kReadiness ||
                        command == agentapp::ReferenceCommand::kMigrateCheck);
  if (summary) {
    print_summary(command, answer.value.get_object());
  } else {
    std::cout << answer.text;
  }
  std::cout.flush();
  return answer.exit_code;
}

}  // namespace

CLI::App* add_app_command(CLI::App& app, std::function<int()>& run) {
  auto* apps = app.add_subcommand(
      "app", "Agent App packages: read, validate and project them (docs/agent-apps.md)");
  apps->require_subcommand(1);
  static AppArgs args;
  struct Reading {
    const char* name;
    const char* help;
    agentapp::ReferenceCommand command;
  };
  static const Reading kReadings[] = {
      {"validate", "Check APP.md and the layered files; findings as the reference CLI gives them",
       agentapp::ReferenceCommand::kValidate},
      {"read-properties", "Print APP.md's front matter as JSON",
       agentapp::ReferenceCommand::kReadProperties},
      {"to-catalog", "Print the catalog fields of the package",
       agentapp::ReferenceCommand::kToCatalog},
      {"project", "Print the host projection with provenance (package and manifest hashes)",
       agentapp::ReferenceCommand::kProject},
      {"readiness", "Static readiness checks (nothing runs)",
       agentapp::ReferenceCommand::kReadiness},
      {"migrate-check", "What the package lacks for a newer manifest version",
       agentapp::ReferenceCommand::kMigrateCheck},
  };
  for (const auto& reading : kReadings) {
    auto* cmd = apps->add_subcommand(reading.name, reading.help);
    cmd->add_option("dir", args.dir, "The package folder (holding APP.md)");
    cmd->add_flag("--json", args.json, "Print the JSON the format's reference CLI prints");
    if (reading.command == agentapp::ReferenceCommand::kValidate ||
        reading.command == agentapp::ReferenceCommand::kMigrateCheck) {
      cmd->add_option("--version", args.version,
                      "Manifest version to check against (0.N or 0.N.x means 0.N.0)");
      cmd->add_option("--target", args.target, "Same as --version");
    }
    if (reading.command == agentapp::ReferenceCommand::kReadiness) {
      cmd->add_option("--workspace", args.workspace, "A workspace folder that must exist");
    }
    cmd->footer(
        "Exit status: 0, 1 when the printed object has \"ok\": false, 2 when the package "
        "cannot be read (message on stderr).");
    const auto command = reading.command;
    cmd->callback([&run, cmd, command] {
      const auto given = [cmd](const char* name) {
        return cmd->get_option_no_throw(name) != nullptr && cmd->count(name) > 0;
      };
      args.has_version = given("--version");
      args.has_target = given("--target");
      args.has_workspace = given("--workspace");
      run = [command] { return run_reference(command, args); };
    });
  }
  return apps;
}

}  // namespace hearth::cli
