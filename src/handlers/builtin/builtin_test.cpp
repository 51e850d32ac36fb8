#include "handlers/builtin/builtin.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "handlers/create.hpp"
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
  EXPECT_EQ(
      registry->parse("http", json::object{{"type", "http"}}, "endpoints[1].handler", problems),
      nullptr);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].path, "endpoints[1].handler.url");
  EXPECT_EQ(problems[1].path, "endpoints[1].handler.method");
}

TEST(HandlerRegistry, UnsupportedKindIsRefusedByNameWithItsReason) {
  Registry registry;
  registry.add_unsupported("made-up", "the 'made-up' kind is not in this build");
  EXPECT_EQ(registry.find("made-up"), nullptr);
  Problems problems;
  registry.parse("made-up", json::object{{"type", "made-up"}}, "endpoints[1].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].to_string(),
            "endpoints[1].handler.type: the 'made-up' kind is not in this build");
}

TEST(HandlerRegistry, UnknownTypeNamesTheKnownOnes) {
  auto registry = make_builtin_registry();
  Problems problems;
  registry->parse("foo", json::object{{"type", "foo"}}, "endpoints[2].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "endpoints[2].handler.type");
  EXPECT_EQ(problems[0].message,
            "unknown handler type 'foo' (known: a2s, function, http, mcp, script)");
}

TEST(HandlerRegistry, DelegatesToTheKind) {
  auto registry = make_builtin_registry();
  Problems problems;
  registry->parse("script", json::object{{"type", "script"}}, "endpoints[0].handler", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].to_string(), "endpoints[0].handler.command: is required");

  problems.clear();
  auto config = registry->parse("script", json::object{{"type", "script"}, {"command", "cat"}},
                                "endpoints[0].handler", problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_NE(config, nullptr);
}

class FakeKind final : public Kind {
 public:
  std::string_view name() const override { return "function"; }
  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object&, const std::string& path,
                                                       Problems& problems) const override {
    problems.push_back({path, "checked by the fake"});
    return nullptr;
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
  registry->parse("function", json::object{}, "h", problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message, "checked by the fake");

  // Marking a kind that runs as unsupported afterwards does not take it away.
  registry->add_unsupported("function", "no");
  EXPECT_NE(registry->find("function"), nullptr);
}

// create() uses the configuration the loader kept, and parses the handler object itself only for
// endpoints built without the loader.
TEST(HandlerConfigs, CreateUsesTheParsedConfigAndParsesOnlyWithoutOne) {
  auto registry = make_builtin_registry();
  const Kind* script = registry->find("script");
  ASSERT_NE(script, nullptr);
  manifest::Manifest service;
  service.name = "svc";
  service.dir = std::filesystem::temp_directory_path();
  manifest::Endpoint endpoint;
  endpoint.id = "ep";
  endpoint.handler_type = "script";

  // As loaded: the handler object is not read again (here it would not even parse).
  Problems problems;
  endpoint.handler_config =
      registry->parse("script", json::object{{"type", "script"}, {"command", "sh"}},
                      "endpoints[0].handler", problems);
  ASSERT_TRUE(problems.empty());
  ASSERT_NE(endpoint.handler_config, nullptr);
  endpoint.handler = json::object{{"type", "script"}};
  auto created = script->create(service, endpoint);
  EXPECT_TRUE(created.ok()) << created.error().message;

  // Built without the loader: parsed now, the first problem named.
  endpoint.handler_config = nullptr;
  created = script->create(service, endpoint);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kInternalError);
  EXPECT_EQ(created.error().message, "handler.command: is required");
  endpoint.handler = json::object{{"type", "script"}, {"command", "sh"}};
  created = script->create(service, endpoint);
  EXPECT_TRUE(created.ok()) << created.error().message;

  // Another kind's configuration is not taken for this one's: the object is parsed instead.
  endpoint.handler_config = registry->parse(
      "mcp", json::object{{"type", "mcp"}, {"server", "s"}, {"tool", "t"}}, "h", problems);
  ASSERT_NE(endpoint.handler_config, nullptr);
  created = script->create(service, endpoint);
  EXPECT_TRUE(created.ok()) << created.error().message;
}

}  // namespace
}  // namespace hearth::handlers
