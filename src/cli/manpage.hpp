#pragma once
/// `hearth man [--out DIR]`: man pages (roff) generated from the command line's own help
/// (cli/command_tree.hpp): hearth(1), with the overview and the list of commands, and one page
/// per command, hearth-serve(1), hearth-call(1), ..., its subcommands in sections of it.

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "cli/command_tree.hpp"

namespace hearth::cli {

/// The pages of `tree`, by file name ("hearth.1", "hearth-serve.1", ...). `version` goes in the
/// page footers ("hearth 0.1.0").
std::map<std::string, std::string> man_pages(const CommandInfo& tree, const std::string& version);

/// Adds `hearth man [--out DIR]` to `app` (the root); `run` is what the command does once parsed.
CLI::App* add_man_command(CLI::App& app, const std::string& version, std::function<int()>& run);

}  // namespace hearth::cli
