#include <gtest/gtest.h>

#include "handlers/handler.hpp"

namespace hearth::handlers {
namespace {

TEST(HandlerRegistry, BuiltinRunsTheSpecKinds) {
  auto registry = make_builtin_registry();
  for (const char* name : {"script", "function", "http"}) {
    ASSERT_NE(registry->find(name), nullptr) << name;
    EXPECT_EQ(registry->find(name)->name(), name);
  }
  Problems problems;
  registry->check("http", json::object{{"type", "http"}}, "endpoints[1].handler", problems);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].path, "endpoints[1].handler.url");
  EXPECT_EQ(problems[1].path, "endpoints[1].handler.method");
}

TEST(HandlerRegistry, UnsupportedKindIsRefusedByNameWithItsReason) {
  Registry registry;
  registry.add_unsupported("made-up", "the 'made-up' kind is not in this build");
  EXPECT_EQ(registry.find("made-up"), nullptr);
  Problems problems;
  registry.check("made-up", json::object{{"type", "made-up"}}, "endpoints[1].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].to_string(),
            "endpoints[1].handler.type: the 'made-up' kind is not in this build");
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
