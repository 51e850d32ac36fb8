#include "cli/completion.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/testing.hpp"

namespace hearth::cli {
namespace {

const OptionInfo* find_option(const std::vector<OptionInfo>& list, const std::string& name) {
  for (const auto& opt : list) {
    if (std::find(opt.names.begin(), opt.names.end(), name) != opt.names.end()) return &opt;
  }
  return nullptr;
}

TEST(CommandTree, ReadsTheVisibleCommandsAndTheirOptions) {
  testing::DemoCli demo;
  const auto tree = command_tree(demo.app);
  EXPECT_EQ(tree.joined(), "demo");
  ASSERT_EQ(tree.commands.size(), 2u);  // "secret" is hidden
  const auto& serve = tree.commands[0];
  EXPECT_EQ(serve.joined(), "demo serve");
  EXPECT_EQ(tree.commands[1].commands.size(), 2u);
  EXPECT_EQ(tree.commands[1].commands[0].joined("-"), "demo-app-install");
  EXPECT_EQ(find_option(tree.options, "--hidden-flag"), nullptr);

  const auto* port = find_option(serve.options, "--port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->names, (std::vector<std::string>{"--port", "-p"}));
  EXPECT_TRUE(port->takes_value);
  EXPECT_EQ(port->default_value, "5555");
  EXPECT_EQ(port->type, "INT");
  const auto* json = find_option(serve.options, "--json");
  ASSERT_NE(json, nullptr);
  EXPECT_FALSE(json->takes_value);
  const auto* state_dir = find_option(serve.options, "--state-dir");
  ASSERT_NE(state_dir, nullptr);
  EXPECT_TRUE(state_dir->directory);

  ASSERT_EQ(serve.positionals.size(), 1u);
  EXPECT_EQ(serve.positionals[0].positional, "paths");
  EXPECT_TRUE(serve.positionals[0].repeatable);
  EXPECT_TRUE(tree.commands[1].commands[0].positionals.at(0).required);

  // --log-level is the root's, accepted after any command (fallthrough), with its choices.
  const auto* level = find_option(serve.inherited, "--log-level");
  ASSERT_NE(level, nullptr);
  EXPECT_EQ(level->choices, (std::vector<std::string>{"debug", "info", "off"}));
  EXPECT_NE(find_option(tree.commands[1].commands[0].inherited, "--log-level"), nullptr);
  EXPECT_EQ(find_option(serve.inherited, "--help"), nullptr);  // each command has its own
  EXPECT_NE(find_option(serve.options, "--help"), nullptr);
}

TEST(CommandTree, WithoutFallthroughNothingIsInherited) {
  CLI::App app{"plain", "plain"};
  std::string level;
  app.add_option("--level", level, "Level");
  app.add_subcommand("run", "Run");
  const auto tree = command_tree(app);
  ASSERT_EQ(tree.commands.size(), 1u);
  EXPECT_TRUE(tree.commands[0].inherited.empty());
}

TEST(Completion, OnlyBashZshAndFish) {
  testing::DemoCli demo;
  const auto tree = command_tree(demo.app);
  EXPECT_TRUE(completion_script(tree, "bash").has_value());
  EXPECT_TRUE(completion_script(tree, "zsh").has_value());
  EXPECT_TRUE(completion_script(tree, "fish").has_value());
  EXPECT_FALSE(completion_script(tree, "tcsh").has_value());
}

TEST(Completion, BashTablesFollowTheTree) {
  testing::DemoCli demo;
  const auto script = *completion_script(command_tree(demo.app), "bash");
  EXPECT_NE(script.find("    'demo') REPLY='serve app' ;;"), std::string::npos) << script;
  EXPECT_NE(script.find("    'demo app') REPLY='install list' ;;"), std::string::npos);
  EXPECT_NE(script.find("'demo serve --port') return 0 ;;"), std::string::npos);
  EXPECT_NE(script.find("'demo serve -p') return 0 ;;"), std::string::npos);
  EXPECT_EQ(script.find("'demo serve --json') return 0"), std::string::npos);  // a flag
  EXPECT_NE(script.find("'demo serve --log-level') REPLY='debug info off' ;;"), std::string::npos);
  EXPECT_NE(script.find("'demo serve --state-dir') REPLY= ; return 2 ;;"), std::string::npos);
  EXPECT_EQ(script.find("secret"), std::string::npos);
  EXPECT_EQ(script.find("--hidden-flag"), std::string::npos);
  EXPECT_NE(script.find("complete -o filenames -F _hearth demo"), std::string::npos);
}

TEST(Completion, ZshDescribesCommandsAndOptions) {
  testing::DemoCli demo;
  const auto script = *completion_script(command_tree(demo.app), "zsh");
  EXPECT_EQ(script.rfind("#compdef demo\n", 0), 0u);
  EXPECT_NE(script.find("_hearth_cmd__app__install() {"), std::string::npos) << script;
  // Brackets, colons and quotes of a description are escaped for _arguments and _describe.
  EXPECT_NE(script.find("'serve:Serve \\[things\\] over HTTP\\: it'\\''s fast'"),
            std::string::npos);
  EXPECT_NE(script.find("'--port=[TCP port; 0 picks one]:INT:_files'"), std::string::npos);
  EXPECT_NE(script.find("'--log-level=[How much to log]:TEXT:(debug info off)'"),
            std::string::npos);
  EXPECT_NE(script.find("'--state-dir=[Where state goes]:TEXT:_files -/'"), std::string::npos);
  EXPECT_NE(script.find("'*:paths:_files'"), std::string::npos);
  EXPECT_NE(script.find("        install) _hearth_cmd__app__install && ret=0 ;;"),
            std::string::npos);
}

TEST(Completion, FishConditionsEachLineOnTheCommandPath) {
  testing::DemoCli demo;
  const auto script = *completion_script(command_tree(demo.app), "fish");
  EXPECT_NE(script.find("complete -c demo -n '__hearth_at \\'demo app\\'' -f -a install -d "
                        "'Install an app'"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("-l port -s p -r -d 'TCP port; 0 picks one'"), std::string::npos);
  EXPECT_NE(script.find("-l log-level -x -a 'debug info off'"), std::string::npos);
  EXPECT_NE(script.find("-d 'Serve [things] over HTTP: it\\'s fast'"), std::string::npos);
  EXPECT_NE(script.find("        case 'demo app'\n            printf '%s\\n' install list\n"),
            std::string::npos);
}

}  // namespace
}  // namespace hearth::cli
