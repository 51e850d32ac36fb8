#include "cli/manpage.hpp"

#include <gtest/gtest.h>

#include "cli/testing.hpp"

namespace hearth::cli {
namespace {

std::map<std::string, std::string> demo_pages() {
  testing::DemoCli demo;
  return man_pages(command_tree(demo.app), "demo 1.2.3");
}

TEST(ManPages, OnePerVisibleTopLevelCommandAndTheOverview) {
  const auto pages = demo_pages();
  std::vector<std::string> names;
  names.reserve(pages.size());
  for (const auto& [name, text] : pages) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"demo-app.1", "demo-serve.1", "demo.1"}));
}

TEST(ManPages, TheOverviewListsTheCommandsAndGlobalOptions) {
  const auto page = demo_pages().at("demo.1");
  EXPECT_EQ(page.find(".TH \"DEMO\" 1 \"\" \"demo 1.2.3\" \"User Commands\"\n"), page.find(".TH"));
  // The NAME line drops the "demo: " the description starts with.
  EXPECT_NE(page.find(".SH NAME\ndemo \\- a tool to try completions on\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find(".TP\n.BR demo\\-serve (1)\nServe [things] over HTTP: it's fast\n"),
            std::string::npos);
  EXPECT_NE(page.find("\\fB\\-\\-log\\-level\\fR \\fITEXT\\fR\nHow much to log (one of: debug, "
                      "info, off)\n"),
            std::string::npos);
  EXPECT_EQ(page.find("secret"), std::string::npos);
  EXPECT_EQ(page.find("hidden"), std::string::npos);
  EXPECT_NE(page.find(".SH FILES\n"), std::string::npos);
  EXPECT_NE(page.find("config.toml"), std::string::npos);
  EXPECT_NE(page.find(".SH SEE ALSO\n.BR demo\\-serve (1) ,\n.BR demo\\-app (1)\n"),
            std::string::npos);
}

TEST(ManPages, ACommandPageHasItsSectionsFromTheHelp) {
  const auto page = demo_pages().at("demo-serve.1");
  EXPECT_NE(page.find(".SH NAME\ndemo\\-serve \\- Serve [things] over HTTP: it's fast\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find(".SH SYNOPSIS\n.B demo serve\n[\\fIOPTIONS\\fR]\n[\\fIpaths\\fR...]\n"),
            std::string::npos);
  EXPECT_NE(page.find("\\fB\\-\\-port\\fR, \\fB\\-p\\fR \\fIINT\\fR\nTCP port; 0 picks one "
                      "[default: 5555]\n"),
            std::string::npos);
  EXPECT_NE(page.find(".TP\n\\fB\\-\\-json\\fR\nPrint JSON\n"), std::string::npos);
  EXPECT_NE(page.find(".SH EXIT STATUS\nExit status: 0 when stopped by a signal, 1 otherwise.\n"),
            std::string::npos);
  EXPECT_NE(page.find(".SH SEE ALSO\n.BR demo (1) ,\n.BR demo\\-app (1)\n"), std::string::npos);
}

TEST(ManPages, NestedCommandsAreSectionsOfTheirPage) {
  const auto page = demo_pages().at("demo-app.1");
  EXPECT_NE(page.find(".SH COMMANDS\n.SS \"demo app install\"\n.B demo app install\n"
                      "[\\fIOPTIONS\\fR]\n\\fIname\\fR\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("\\fB\\-\\-force\\fR\nReplace an installed app\n"), std::string::npos);
  EXPECT_NE(page.find(".SS \"demo app list\"\n"), std::string::npos);
  // No footer: the generic exit status.
  EXPECT_NE(page.find(".SH EXIT STATUS\n0 on success, non-zero on failure."), std::string::npos);
}

TEST(ManPages, TextIsEscapedForRoff) {
  CLI::App app{"t: test", "t"};
  std::string value;
  app.add_subcommand("x", ".starts with a dot\nback\\slash and 'quote")->footer("'quoted line");
  const auto page = man_pages(command_tree(app), "t 0").at("t-x.1");
  EXPECT_NE(page.find("\n\\&.starts with a dot\nback\\eslash and 'quote\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find(".SH NOTES\n\\&'quoted line\n"), std::string::npos);
}

}  // namespace
}  // namespace hearth::cli
