#include "mcpserver/app_document.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hearth::mcpserver {
namespace {

namespace fs = std::filesystem;

class AppDocumentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hearth-app-doc-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "view");
  }
  void TearDown() override { fs::remove_all(dir_); }

  host::Host::Service service(std::string_view view) {
    host::Host::Service s;
    s.dir = dir_;
    s.manifest.name = "demo";
    s.manifest.version = "1.2.3";
    s.manifest.dir = dir_;
    s.manifest.view = json::parse_text(view).value();
    manifest::Endpoint add;
    add.id = "add";
    add.method = manifest::Method::kMutation;
    manifest::Endpoint changes;
    changes.id = "changes";
    changes.method = manifest::Method::kSubscription;
    s.manifest.endpoints = {add, changes};
    s.manifest.raw = json::object{{"name", "demo"}};
    return s;
  }
  void write(const fs::path& rel, std::string_view text) { std::ofstream(dir_ / rel) << text; }

  fs::path dir_;
};

using Tools = std::map<std::string, AppTool, std::less<>>;

TEST_F(AppDocumentTest, InlineComponentWithBridgeAndTools) {
  auto doc = app_document(
      service(
          R"({"component":{"type":"inline","code":"customElements.define('x-v', class extends HTMLElement {});"}})"),
      {}, Tools{{"add", AppTool{"add", true, false}}});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string& html = doc.value().html;
  EXPECT_NE(html.find("customElements.define('x-v'"), std::string::npos);
  EXPECT_NE(html.find("ui/initialize"), std::string::npos);
  EXPECT_NE(html.find(R"("tools":{"add":{"name":"add","mutation":true,"wrapInput":false}})"),
            std::string::npos);
  EXPECT_NE(html.find(R"("subscriptions":{"changes":"lavs://demo/subscriptions/changes"})"),
            std::string::npos);
  EXPECT_NE(html.find(R"(hearthMcpApp.mountModule(__hearth_import("inline.js"), "");)"),
            std::string::npos);
  EXPECT_TRUE(doc.value().resource_domains.empty());
  auto qualified = app_document(service(R"({"component":{"type":"inline","code":"1"}})"), {},
                                Tools{{"add", AppTool{"demo.add", true, true}}});
  ASSERT_TRUE(qualified.ok());
  EXPECT_NE(qualified.value().html.find(R"("name":"demo.add","mutation":true,"wrapInput":true)"),
            std::string::npos);
}

TEST_F(AppDocumentTest, TheBridgeAnswersTheHostsRequests) {
  auto doc = app_document(service(R"({"component":{"type":"inline","code":"1"}})"), {}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string& html = doc.value().html;
  for (const char* text : {"case 'ping':", "case 'ui/resource-teardown':", "-32601",
                           "ui/notifications/host-context-changed", "ui/notifications/tool-result",
                           "ui/notifications/size-changed"}) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  // Nothing in it needs more than allow-scripts.
  EXPECT_EQ(html.find("<form"), std::string::npos);
  EXPECT_EQ(html.find("localStorage"), std::string::npos);
}

TEST_F(AppDocumentTest, LocalModuleIsBundledAndCannotCloseItsScript) {
  write("view/view.js",
        "import { s } from './lib.js';\nconst t = '</script><script>alert(1)</script>';\n");
  write("view/lib.js", "export const s = 1;\n");
  auto doc =
      app_document(service(R"({"component":{"type":"local","path":"view/view.js"}})"), {}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string& html = doc.value().html;
  EXPECT_EQ(html.find("</script><script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find(R"(<\/script><script>alert(1)<\/script>)"), std::string::npos);
  EXPECT_NE(html.find(R"(__hearth_define("lib.js")"), std::string::npos);
  EXPECT_NE(html.find(R"(hearthMcpApp.mountModule(__hearth_import("view.js"), "");)"),
            std::string::npos);
}

TEST_F(AppDocumentTest, LocalHtmlGetsTheBridgeFirstInItsHead) {
  write("view/index.html",
        "<!doctype html><html><head><title>t</title></head><body><p>hi</p></body></html>");
  auto doc =
      app_document(service(R"({"component":{"type":"local","path":"view/index.html"}})"), {}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string& html = doc.value().html;
  const auto bridge = html.find("hearth-mcp-app");
  ASSERT_NE(bridge, std::string::npos);
  EXPECT_LT(html.find("<head>"), bridge);
  EXPECT_LT(bridge, html.find("<title>"));
  EXPECT_LT(html.find("hearthMcpApp.mountHtml();"), html.find("<title>"));
  EXPECT_NE(html.find("<p>hi</p>"), std::string::npos);
}

TEST_F(AppDocumentTest, CdnModuleIsImportedFromAnAllowedOriginOnly) {
  const std::string view =
      R"({"component":{"type":"cdn","url":"https://cdn.example.com/v.js?x=\"1\"","exportName":"View"}})";
  auto refused = app_document(service(view), {}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  auto doc = app_document(service(view), {"https://cdn.example.com"}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(doc.value().resource_domains, std::vector<std::string>{"https://cdn.example.com"});
  // The URL as a JSON string: its quotes cannot end the script's string.
  EXPECT_NE(
      doc.value().html.find(
          R"#(hearthMcpApp.mountModule(import("https://cdn.example.com/v.js?x=\"1\""), "View");)#"),
      std::string::npos)
      << doc.value().html;
}

TEST_F(AppDocumentTest, NpmComponentIsBundledFromItsPackage) {
  fs::create_directories(dir_ / "node_modules" / "demo-view");
  write("node_modules/demo-view/package.json",
        R"({"name":"demo-view","version":"1.0.0","type":"module","exports":{".":"./index.js"}})");
  write("node_modules/demo-view/index.js",
        "import { css } from './css.js';\nexport default class DemoView extends HTMLElement {}\n");
  write("node_modules/demo-view/css.js", "export const css = 'p{}';\n");
  auto doc = app_document(
      service(R"({"component":{"type":"npm","package":"demo-view","version":"^1.0.0"}})"), {}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const std::string& html = doc.value().html;
  EXPECT_NE(html.find(R"(__hearth_define("css.js")"), std::string::npos);
  EXPECT_NE(html.find(R"(hearthMcpApp.mountModule(__hearth_import("index.js"), "");)"),
            std::string::npos);
}

TEST_F(AppDocumentTest, NpmComponentThatCannotBeBundledIsRefused) {
  fs::create_directories(dir_ / "node_modules" / "demo-view");
  write("node_modules/demo-view/package.json",
        R"({"name":"demo-view","version":"1.0.0","type":"module","main":"index.js"})");
  write("node_modules/demo-view/index.js", "import { html } from 'lit';\n");
  auto doc = app_document(
      service(R"({"component":{"type":"npm","package":"demo-view","version":"1"}})"), {}, {});
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, ErrorCode::kInvalidParams);
  EXPECT_NE(doc.error().message.find("imports 'lit'"), std::string::npos) << doc.error().message;
}

}  // namespace
}  // namespace hearth::mcpserver
