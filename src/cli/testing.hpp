#pragma once
/// A small command line with the shapes hearth's has (nested subcommands, a hidden one, flags,
/// options with choices, defaults and directories, positionals, footers), for the tests of the
/// completion scripts and the man pages.

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace hearth::cli::testing {

struct DemoCli {
  CLI::App app{"demo: a tool to try completions on", "demo"};
  std::string level = "info";
  int port = 5555;
  bool json = false;
  std::vector<std::string> paths;
  std::string dir;
  std::string name;

  DemoCli() {
    app.fallthrough();
    app.add_option("--log-level", level, "How much to log")
        ->check(CLI::IsMember({"debug", "info", "off"}));
    auto* serve = app.add_subcommand("serve", "Serve [things] over HTTP: it's fast");
    serve->add_option("paths", paths, "Folders to serve");
    serve->add_option("--port,-p", port, "TCP port; 0 picks one")->capture_default_str();
    serve->add_flag("--json", json, "Print JSON");
    serve->add_option("--state-dir", dir, "Where state goes")->check(CLI::ExistingDirectory);
    serve->footer("Exit status: 0 when stopped by a signal, 1 otherwise.");
    auto* app_cmd = app.add_subcommand("app", "Manage apps");
    auto* install = app_cmd->add_subcommand("install", "Install an app");
    install->add_option("name", name, "The app's name")->required();
    install->add_flag("--force", json, "Replace an installed app");
    app_cmd->add_subcommand("list", "List the apps");
    auto* secret = app.add_subcommand("secret", "Not shown");
    secret->group("");
    app.add_flag("--hidden-flag", json, "Not shown")->group("");
  }
};

}  // namespace hearth::cli::testing
