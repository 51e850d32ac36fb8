#include "views/component.hpp"

#include <gtest/gtest.h>

#include "host/testing.hpp"

namespace hearth::views {
namespace {
namespace fs = std::filesystem;
using host::testing::TempService;

json::value view_of(std::string_view component) {
  return json::parse_text(std::string(R"({"component": )") + std::string(component) + "}").value();
}

Result<Component> resolve_in(const TempService& s, std::string_view component,
                             const std::vector<std::string>& origins = {}) {
  return resolve(s.dir(), view_of(component), origins);
}

class ComponentTest : public ::testing::Test {
 protected:
  TempService service_{"{}"};
};

TEST_F(ComponentTest, LocalModuleIsServedFromItsOwnFolder) {
  service_.write("views/todo view.js", "export {}");
  auto c = resolve_in(service_, R"({"type": "local", "path": "./views/todo view.js"})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().type, Component::Type::kLocal);
  EXPECT_EQ(c.value().base, service_.dir() / "views");
  EXPECT_EQ(c.value().entry, "todo view.js");
  EXPECT_EQ(c.value().module, "./todo%20view.js");
  EXPECT_FALSE(c.value().html);
  EXPECT_FALSE(c.value().entry_only);
}

TEST_F(ComponentTest, LocalHtmlAtTheRootServesOnlyItself) {
  service_.write("view.HTML", "<p>hi</p>");
  auto c = resolve_in(service_, R"({"type": "local", "path": "view.HTML"})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c.value().html);
  EXPECT_TRUE(c.value().entry_only);
  EXPECT_TRUE(c.value().module.empty());
}

TEST_F(ComponentTest, LocalPathsOutsideTheFolderOrThroughLinksAreRefused) {
  service_.write("views/real.js", "");
  fs::create_symlink(service_.dir() / "views" / "real.js", service_.dir() / "views" / "link.js");
  for (const char* path : {"../x.js", "/etc/passwd", "views/../views/real.js", "views/link.js",
                           "views/missing.js", "views"}) {
    auto c = resolve_in(service_, std::string(R"({"type": "local", "path": ")") + path + "\"}");
    ASSERT_FALSE(c.ok()) << path;
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidParams) << path;
  }
}

TEST_F(ComponentTest, InlineImportsItsCodeFromTheMount) {
  auto c = resolve_in(
      service_,
      R"J({"type": "inline", "code": "customElements.define('x-y', class extends HTMLElement {})"})J");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().module, "./.hearth/inline.js");
  EXPECT_NE(c.value().code.find("x-y"), std::string::npos);
}

TEST_F(ComponentTest, NpmResolvesTheEntryFromTheServiceNodeModulesOnly) {
  service_.write("node_modules/@acme/todo-view/package.json",
                 R"({"name": "@acme/todo-view", "version": "1.4.2",
                     "exports": {".": {"require": "./cjs.js", "import": "./dist/view.mjs"}}})");
  service_.write("node_modules/@acme/todo-view/dist/view.mjs", "export {}");
  auto c =
      resolve_in(service_, R"({"type": "npm", "package": "@acme/todo-view", "version": "^1.2.0"})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().module, "./node_modules/%40acme/todo-view/dist/view.mjs");
  EXPECT_EQ(c.value().base, service_.dir() / "node_modules/@acme/todo-view");
  EXPECT_EQ(npm_rest(c.value(), "node_modules/@acme/todo-view/dist/view.mjs"), "dist/view.mjs");
  EXPECT_EQ(npm_rest(c.value(), "node_modules/other/x.js"), "");

  auto wrong =
      resolve_in(service_, R"({"type": "npm", "package": "@acme/todo-view", "version": "2.0.0"})");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("1.4.2"), std::string::npos);
  auto missing = resolve_in(service_, R"({"type": "npm", "package": "left-pad"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("node_modules"), std::string::npos);
  auto bad = resolve_in(service_, R"({"type": "npm", "package": "../../etc"})");
  ASSERT_FALSE(bad.ok());
}

TEST_F(ComponentTest, NpmFallsBackToModuleThenMain) {
  service_.write("node_modules/a/package.json",
                 R"({"version": "1.0.0", "module": "m.js", "main": "c.js"})");
  service_.write("node_modules/a/m.js", "");
  service_.write("node_modules/b/package.json", R"({"version": "1.0.0", "main": "./lib/c.js"})");
  service_.write("node_modules/b/lib/c.js", "");
  service_.write("node_modules/c/package.json",
                 R"({"version": "1.0.0", "main": "../../escape.js"})");
  EXPECT_EQ(resolve_in(service_, R"({"type": "npm", "package": "a"})").value().entry, "m.js");
  EXPECT_EQ(resolve_in(service_, R"({"type": "npm", "package": "b"})").value().entry, "lib/c.js");
  EXPECT_FALSE(resolve_in(service_, R"({"type": "npm", "package": "c"})").ok());
}

TEST_F(ComponentTest, CdnNeedsItsOriginAllowed) {
  const char* cdn =
      R"({"type": "cdn", "url": "https://cdn.example.com/v/1/view.js", "exportName": "TodoView"})";
  auto refused = resolve_in(service_, cdn);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("--allow-view-origin https://cdn.example.com"),
            std::string::npos);
  auto allowed = resolve_in(service_, cdn, {"https://cdn.example.com"});
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed.value().script_origin, "https://cdn.example.com");
  EXPECT_EQ(allowed.value().module, "https://cdn.example.com/v/1/view.js");
  EXPECT_EQ(allowed.value().export_name, "TodoView");
}

TEST_F(ComponentTest, NoComponentSaysSo) {
  auto c = resolve(service_.dir(), json::value(), {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(c.error().data.as_object().at("reason"), "no view component");
}

TEST(VersionTest, Ranges) {
  EXPECT_TRUE(version_satisfies("1.4.2", ""));
  EXPECT_TRUE(version_satisfies("1.4.2", "*"));
  EXPECT_TRUE(version_satisfies("1.4.2", "1.4.2"));
  EXPECT_TRUE(version_satisfies("1.4.2", "1.4"));
  EXPECT_TRUE(version_satisfies("1.4.2", "1"));
  EXPECT_FALSE(version_satisfies("1.4.2", "1.4.3"));
  EXPECT_TRUE(version_satisfies("1.4.2", "^1.2.0"));
  EXPECT_FALSE(version_satisfies("1.4.2", "^1.5.0"));
  EXPECT_FALSE(version_satisfies("2.0.0", "^1.2.0"));
  EXPECT_TRUE(version_satisfies("0.3.9", "^0.3.1"));
  EXPECT_FALSE(version_satisfies("0.4.0", "^0.3.1"));
  EXPECT_TRUE(version_satisfies("1.4.9", "~1.4.2"));
  EXPECT_FALSE(version_satisfies("1.5.0", "~1.4.2"));
  EXPECT_FALSE(version_satisfies("", "1.0.0"));
  EXPECT_FALSE(version_satisfies("1.0.0", ">=1 <2"));
}

TEST(PackageNameTest, Names) {
  EXPECT_TRUE(valid_package_name("todo-view"));
  EXPECT_TRUE(valid_package_name("@acme/todo.view_2"));
  EXPECT_FALSE(valid_package_name(""));
  EXPECT_FALSE(valid_package_name("Todo"));
  EXPECT_FALSE(valid_package_name(".."));
  EXPECT_FALSE(valid_package_name("@acme/../x"));
  EXPECT_FALSE(valid_package_name("a/b"));
  EXPECT_FALSE(valid_package_name("@acme"));
}

}  // namespace
}  // namespace hearth::views
