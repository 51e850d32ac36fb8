#include <gtest/gtest.h>

#include "handlers/handler.hpp"

namespace hearth::handlers {
namespace {

TEST(HandlerRegistry, BuiltinRunsScriptAndFunctionAndRefusesTheOtherSpecKinds) {
  auto registry = make_builtin_registry();
  ASSERT_NE(registry->find("script"), nullptr);
  EXPECT_EQ(registry->find("script")->name(), "script");
  ASSERT_NE(registry->find("function"), nullptr);
  EXPECT_EQ(registry->find("function")->name(), "function");
  EXPECT_EQ(registry->find("http"), nullptr);

  Problems problems;
  registry->check("http", json::object{{"type", "http"}}, "endpoints[1].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].to_string(),
            "endpoints[1].handler.type: the 'http' handler kind is defined by the LAVS spec "
            "but this hearth build does not run it yet");

  problems.clear();
  registry->check("mcp", json::object{}, "endpoints[0].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message.find("'mcp' handler kind"), std::string::npos);
}

TEST(HandlerRegistry, UnknownTypeNamesTheKnownOnes) {
  auto registry = make_builtin_registry();
  Problems problems;
  registry->check("foo", json::object{{"type", "foo"}}, "endpoints[2].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "endpoints[2].handler.type");
  EXPECT_EQ(problems[0].message, "unknown handler type 'foo' (known: function, http, mcp, script)");
}

TEST(HandlerRegistry, DelegatesToTheKind) {
  auto registry = make_builtin_registry();
  Problems problems;
  registry->check("script", json::object{{"type", "script"}}, "endpoints[0].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].to_string(), "endpoints[0].handler.command: is required");

  problems.clear();
  registry->check("script", json::object{{"type", "script"}, {"command", "cat"}},
                  "endpoints[0].handler", problems);
  EXPECT_TRUE(problems.empty());
}

class FakeKind final : public Kind {
 public:
  std::string_view name() const override { return "function"; }
  void check(const json::object&, const std::string& path, Problems& problems) const override {
    problems.push_back({path, "checked by the fake"});
  }
  Result<std::unique_ptr<Handler>> create(const manifest::Manifest&,
                                          const manifest::Endpoint&) const override {
    return Error::make(ErrorCode::kInternalError, "not used");
  }
};

TEST(HandlerRegistry, AddedKindReplacesAnUnsupportedOne) {
  auto registry = make_builtin_registry();
  registry->add(std::make_unique<FakeKind>());
  ASSERT_NE(registry->find("function"), nullptr);
  Problems problems;
  registry->check("function", json::object{}, "h", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message, "checked by the fake");

  // Marking a kind that runs as unsupported afterwards does not take it away.
  registry->add_unsupported("function", "no");
  EXPECT_NE(registry->find("function"), nullptr);
}

}  // namespace
}  // namespace hearth::handlers
