#include "cli/usage.hpp"

#include <iostream>

#include "common/suggest.hpp"
#include "json/json.hpp"

namespace hearth::cli {

namespace {

/// The commands from the program to `cmd`: "hearth app show".
std::string command_path(const std::vector<const CLI::App*>& chain) {
  std::string out;
  for (const auto* c : chain) {
    if (!out.empty()) out += ' ';
    out += c->get_name();
  }
  return out;
}

const CLI::Option* find_option(const std::vector<const CLI::App*>& chain, const std::string& name) {
  // Options of the command and of the commands it is under (global options fall through).
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (const auto* opt = (*it)->get_option_no_throw(name);
        opt != nullptr && opt->nonpositional()) {
      return opt;
    }
  }
  return nullptr;
}

std::vector<std::string> option_names(const std::vector<const CLI::App*>& chain) {
  std::vector<std::string> names;
  for (const auto* c : chain) {
    for (const auto* opt : c->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    }
  }
  return names;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& word) {
  for (const auto* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    if (sub->check_name(word)) return sub;
  }
  return nullptr;
}

bool takes_positionals(const CLI::App& app) {
  for (const auto* opt : app.get_options()) {
    if (!opt->nonpositional()) return true;
  }
  return false;
}

bool looks_like_number(const std::string& word) {
  return word.size() > 1 && word[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(word[1])) != 0);
}

}  // namespace

std::vector<std::string> expand_help(std::vector<std::string> args) {
  if (args.size() >= 2 && args[1] == "help") {
    args.erase(args.begin() + 1);
    args.emplace_back("--help");
  }
  return args;
}

std::optional<std::string> misspelling(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<const CLI::App*> chain{&app};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    const CLI::App& cmd = *chain.back();
    if (word.size() > 1 && word[0] == '-' && !looks_like_number(word)) {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* opt = find_option(chain, name);
      if (opt == nullptr) {
        std::string text = command_path(chain) + ": unknown option '" + name + "'";
        if (auto near = closest_word(name, option_names(chain))) {
          text += "; did you mean '" + *near + "'?";
        }
        return text + "\nRun `" + command_path(chain) + " --help` for its options.";
      }
      // A value follows unless given with '=' (or the option is a flag).
      if (opt->get_expected_max() != 0 && word.find('=') == std::string::npos) ++i;
      continue;
    }
    if (const auto* sub = find_subcommand(cmd, word)) {
      chain.push_back(sub);
      continue;
    }
    if (!subcommand_names(cmd).empty() && !takes_positionals(cmd)) {
      std::string text = command_path(chain) + ": unknown command '" + word + "'";
      if (auto near = closest_word(word, subcommand_names(cmd))) {
        text += "; did you mean '" + *near + "'?";
      }
      return text + "\nRun `" + command_path(chain) + " --help` for its commands.";
    }
  }
  return std::nullopt;
}

std::string config_error_text(const CLI::App& app, const std::string& file,
                              const CLI::ConfigError& error) {
  std::string text = "hearth: configuration file " + file + ": " + error.what();
  // "... not able to parse serve.prot": the key, under its command's section.
  const std::string what = error.what();
  const std::size_t at = what.rfind(' ');
  if (at == std::string::npos) return text;
  const std::string key = what.substr(at + 1);
  std::vector<const CLI::App*> chain{&app};
  std::size_t start = 0;
  for (std::size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
    const auto* sub = find_subcommand(*chain.back(), key.substr(start, dot - start));
    if (sub == nullptr) break;
    chain.push_back(sub);
  }
  const std::string name = key.substr(start);
  if (key.ends_with(".++")) {
    // A section no command has: "[srve]" is read as "srve.++".
    const std::string section = key.substr(0, key.size() - 3);
    const std::string wrong = section.substr(start);
    text = "hearth: " + file + ": unknown section [" + section + "]";
    if (auto near =
            closest_word(wrong.substr(0, wrong.find('.')), subcommand_names(*chain.back()))) {
      text += "; did you mean [" + key.substr(0, start) + *near + "]?";
    }
    return text + "\nSections are commands: [serve], [call], [app.install], ...";
  }
  std::vector<std::string> known;
  for (const auto* opt : chain.back()->get_options()) {
    for (const auto& l : opt->get_lnames()) known.push_back(l);
    if (!opt->nonpositional()) known.push_back(opt->get_name());
  }
  text = "hearth: " + file + ": unknown key '" + key + "'";
  if (auto near = closest_word(name, known)) {
    text += "; did you mean '" + key.substr(0, start) + *near + "'?";
  }
  return text + "\n`hearth config show` prints every key with its default.";
}

void print_error(std::string_view what, const Error& error, bool as_json) {
  print_error(what, json::value(to_json(error)), as_json);
}

void print_error(std::string_view what, const json::value& error, bool as_json) {
  if (as_json) {
    std::cout << json::dump(error) << std::endl;
    return;
  }
  if (!error.is_object()) {
    std::cerr << "hearth " << what << ": " << json::dump(error) << std::endl;
    return;
  }
  const auto& obj = error.get_object();
  const auto* message = obj.if_contains("message");
  const auto* code = obj.if_contains("code");
  std::cerr << "hearth " << what << ": "
            << (message != nullptr && message->is_string() ? std::string(message->get_string())
                                                           : std::string("error"));
  if (code != nullptr && code->is_int64()) std::cerr << " [" << code->get_int64() << "]";
  std::cerr << "\n";
  if (const auto* data = obj.if_contains("data"); data != nullptr && data->is_object()) {
    for (const auto& [key, value] : data->get_object()) {
      std::cerr << "  " << std::string_view(key) << ": "
                << (value.is_string() ? std::string(value.get_string()) : json::dump(value))
                << "\n";
    }
  }
  std::cerr << std::flush;
}

}  // namespace hearth::cli
