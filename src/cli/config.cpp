// `hearth config`: where the configuration file is, and every key it may hold (each option of
// each command, under the command's [section]) with its default and, when set, its value.
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>

#include "cli/common.hpp"

namespace hearth::cli {

namespace {

struct ConfigArgs {
  std::vector<std::string> commands;  ///< only these sections ("serve", "app install")
};

bool is_numeric_type(const std::string& type) {
  return type.find("INT") != std::string::npos || type.find("FLOAT") != std::string::npos ||
         type.find("NUMBER") != std::string::npos;
}

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string toml_value(const CLI::Option& opt, const std::vector<std::string>& values) {
  if (opt.get_expected_max() == 0)
    return values.empty() || values.back() != "false" ? "true" : "false";
  const bool numeric = is_numeric_type(opt.get_type_name());
  const auto one = [&](const std::string& v) { return numeric ? v : toml_string(v); };
  if (opt.get_items_expected_max() <= 1 && values.size() == 1) return one(values.front());
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i == 0 ? "" : ", ") + one(values[i]);
  return out + "]";
}

/// The key a config file names `opt` by: its long name, or a positional's name.
std::string key_of(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return opt.get_lnames().front();
  return opt.nonpositional() ? std::string() : opt.get_name();
}

void print_section(const CLI::App& cmd, const std::string& section) {
  std::vector<const CLI::Option*> options;
  for (const auto* opt : cmd.get_options()) {
    const std::string key = key_of(*opt);
    if (key.empty() || key == "help" || key == "version" || key == "config") continue;
    options.push_back(opt);
  }
  if (!options.empty()) {
    std::cout << "\n";
    if (!section.empty()) std::cout << "[" << section << "]\n";
    for (const auto* opt : options) {
      if (!opt->get_description().empty()) std::cout << "# " << opt->get_description() << "\n";
      if (opt->count() > 0) {
        std::cout << key_of(*opt) << " = " << toml_value(*opt, opt->results()) << "\n";
      } else if (opt->get_expected_max() == 0) {
        std::cout << "# " << key_of(*opt) << " = false\n";
      } else if (!opt->get_default_str().empty()) {
        std::cout << "# " << key_of(*opt) << " = " << toml_value(*opt, {opt->get_default_str()})
                  << "\n";
      } else {
        std::cout << "# " << key_of(*opt) << " =\n";
      }
    }
  }
  for (const auto* sub :
       cmd.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    if (sub->get_name() == "config") continue;
    print_section(*sub, section.empty() ? sub->get_name() : section + "." + sub->get_name());
  }
}

}  // namespace

CLI::App* add_config_command(CLI::App& app, std::function<int()>& run) {
  static ConfigArgs args;
  auto* config = app.add_subcommand(
      "config", "The configuration file: where it is, and every key it may hold");
  config->require_subcommand(1);
  auto* path_cmd = config->add_subcommand("path", "Print the configuration file's path");
  path_cmd->callback([&run, &app] {
    run = [&app] {
      const auto* opt = app.get_config_ptr();
      std::cout << (opt != nullptr ? opt->as<std::string>() : std::string()) << std::endl;
      return 0;
    };
  });
  auto* show_cmd = config->add_subcommand(
      "show",
      "Print every key as TOML: those the file (or the command line) sets, the others commented "
      "out with their defaults. A starting point: `hearth config show serve > CONFIG_FILE`");
  show_cmd->add_option("commands", args.commands,
                       "Only these commands' sections (e.g. serve); default: every command");
  show_cmd->callback([&run, &app] {
    run = [&app] {
      const auto* opt = app.get_config_ptr();
      std::cout << "# hearth configuration (" << (opt != nullptr ? opt->as<std::string>() : "")
                << ")\n# Every option of every command, under the command's section; the "
                   "command line wins.\n";
      if (args.commands.empty()) {
        print_section(app, "");
        return 0;
      }
      for (const auto& name : args.commands) {
        const CLI::App* cmd = &app;
        std::string section;
        std::size_t start = 0;
        const std::string path = name + " ";
        for (std::size_t sp; (sp = path.find_first_of(" .", start)) != std::string::npos;
             start = sp + 1) {
          const std::string word = path.substr(start, sp - start);
          if (word.empty()) continue;
          const CLI::App* next = nullptr;
          for (const auto* sub : cmd->get_subcommands([](const CLI::App*) { return true; })) {
            if (sub->get_name() == word) next = sub;
          }
          if (next == nullptr) {
            std::cerr << "hearth config show: no command '" << name << "'" << std::endl;
            return 2;
          }
          cmd = next;
          section += (section.empty() ? "" : ".") + word;
        }
        print_section(*cmd, section);
      }
      return 0;
    };
  });
  return config;
}

}  // namespace hearth::cli
