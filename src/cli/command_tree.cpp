#include "cli/command_tree.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace hearth::cli {

std::string CommandInfo::joined(const std::string& separator) const {
  std::string out;
  for (const auto& part : path) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

namespace {

/// "TEXT:{auto,native,prompt}" -> {"auto", "native", "prompt"} (an IsMember check's description).
std::vector<std::string> choices_in(const std::string& type_name) {
  std::vector<std::string> choices;
  const auto open = type_name.find(":{");
  if (open == std::string::npos) return choices;
  const auto close = type_name.find('}', open);
  if (close == std::string::npos) return choices;
  std::string item;
  for (std::size_t i = open + 2; i < close; ++i) {
    if (type_name[i] == ',') {
      if (!item.empty()) choices.push_back(item);
      item.clear();
    } else {
      item += type_name[i];
    }
  }
  if (!item.empty()) choices.push_back(item);
  return choices;
}

OptionInfo option_info(const CLI::Option& opt) {
  OptionInfo info;
  for (const auto& name : opt.get_lnames()) info.names.push_back("--" + name);
  for (const auto& name : opt.get_snames()) info.names.push_back("-" + name);
  if (opt.get_positional()) info.positional = opt.get_name(true);
  info.description = opt.get_description();
  const std::string type_name = opt.get_type_name();
  info.type = type_name.substr(0, type_name.find(':'));
  info.default_value = opt.get_default_str();
  info.choices = choices_in(type_name);
  info.takes_value = opt.get_expected_max() > 0;
  info.repeatable = opt.get_expected_max() > 1;
  info.required = opt.get_required();
  info.directory = type_name.find("DIR") != std::string::npos;
  return info;
}

bool visible(const CLI::Option* opt) {
  return !opt->get_group().empty();
}

CommandInfo walk(const CLI::App& app, std::vector<std::string> path,
                 const std::vector<OptionInfo>& from_parent) {
  CommandInfo command;
  command.path = std::move(path);
  command.description = app.get_description();
  command.footer = app.get_footer();
  for (const auto* opt : app.get_options(visible)) {
    (opt->get_positional() ? command.positionals : command.options).push_back(option_info(*opt));
  }
  if (app.get_fallthrough()) command.inherited = from_parent;
  // What a subcommand of this one may also be given: these options (but --help, its own) and
  // those this one inherits.
  std::vector<OptionInfo> passed = command.inherited;
  for (const auto& opt : command.options) {
    if (std::find(opt.names.begin(), opt.names.end(), "--help") == opt.names.end()) {
      passed.push_back(opt);
    }
  }
  for (const auto* sub : app.get_subcommands(
           [](const CLI::App* a) { return !a->get_name().empty() && !a->get_group().empty(); })) {
    auto sub_path = command.path;
    sub_path.push_back(sub->get_name());
    command.commands.push_back(walk(*sub, std::move(sub_path), passed));
  }
  return command;
}

}  // namespace

CommandInfo command_tree(const CLI::App& app) {
  return walk(app, {app.get_name().empty() ? std::string("hearth") : app.get_name()}, {});
}

}  // namespace hearth::cli
