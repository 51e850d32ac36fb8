#pragma once
/// The `hearth` command line as data, read from its CLI11 tree: what the shell completions
/// (cli/completion.cpp) and the man pages (cli/manpage.cpp) are generated from, so that neither
/// drifts from the parser.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace hearth::cli {

/// One option, flag or positional argument of a command.
struct OptionInfo {
  std::vector<std::string> names;  ///< "--port", "-p"; empty for a positional
  std::string positional;          ///< the positional's name ("paths"); empty for an option
  std::string description;
  std::string type;                  ///< CLI11's type name without its checks ("TEXT", "UINT")
  std::string default_value;         ///< shown only when captured ("5555")
  std::vector<std::string> choices;  ///< the allowed values (IsMember), else empty
  bool takes_value = false;          ///< false: a flag
  bool repeatable = false;           ///< may be given several times / takes several values
  bool required = false;
  bool directory = false;  ///< the value names a directory (complete directories only)
};

/// One command: `hearth` itself or a subcommand at any depth.
struct CommandInfo {
  std::vector<std::string> path;  ///< {"hearth", "app", "install"}
  std::string description;
  std::string footer;
  std::vector<OptionInfo> options;      ///< its own options and flags (with --help)
  std::vector<OptionInfo> inherited;    ///< its parents' options it also accepts (fallthrough)
  std::vector<OptionInfo> positionals;  ///< in order
  std::vector<CommandInfo> commands;    ///< visible subcommands, in the order they were added

  /// "hearth app install"
  [[nodiscard]] std::string joined(const std::string& separator = " ") const;
};

/// The visible tree under `app` (hidden subcommands and options, group "", are left out).
CommandInfo command_tree(const CLI::App& app);

}  // namespace hearth::cli
