#pragma once
/// What the CLI says when it is used wrongly, and how it reports a failed request: "did you
/// mean" for misspelt commands and options, `hearth help [COMMAND...]`, readable errors (JSON
/// with --json, for scripts).

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "json/json.hpp"

namespace hearth::cli {

/// `hearth help [COMMAND...]` as `hearth [COMMAND...] --help`; other arguments unchanged.
std::vector<std::string> expand_help(std::vector<std::string> args);

/// Why `args` (argv, the program first) cannot be what was meant: an unknown command or option,
/// with the closest known one when there is one. nullopt when every word is known (CLI11 then
/// checks the rest: values, required arguments).
std::optional<std::string> misspelling(const CLI::App& app, const std::vector<std::string>& args);

/// A CLI11 configuration error ("INI was not able to parse serve.prot") as a sentence naming
/// the file and, when one is close, the key meant.
std::string config_error_text(const CLI::App& app, const std::string& file,
                              const CLI::ConfigError& error);

/// Prints a failed request for a person (`hearth WHAT: message`, then the details of its data,
/// on stderr), or with `as_json` the JSON-RPC error object on stdout.
void print_error(std::string_view what, const Error& error, bool as_json);
/// Same, for an error object as a daemon sent it.
void print_error(std::string_view what, const json::value& error, bool as_json);

}  // namespace hearth::cli
