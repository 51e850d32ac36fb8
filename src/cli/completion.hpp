#pragma once
/// `hearth completion bash|zsh|fish`: shell completion scripts generated from the command line's
/// own tree (cli/command_tree.hpp), so that they list exactly the commands and options it parses.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command_tree.hpp"

namespace hearth::cli {

/// The completion script of `tree` for `shell` ("bash", "zsh" or "fish"); nullopt for another.
std::optional<std::string> completion_script(const CommandInfo& tree, std::string_view shell);

/// Adds `hearth completion SHELL [--out FILE]` to `app` (the root: the script covers all of it);
/// `run` is what the command does once parsed.
CLI::App* add_completion_command(CLI::App& app, std::function<int()>& run);

}  // namespace hearth::cli
