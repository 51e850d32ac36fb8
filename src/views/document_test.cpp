#include "views/document.hpp"

#include <gtest/gtest.h>

namespace hearth::views {
namespace {

std::string header(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return {};
}

TEST(ScriptJsonTest, NothingCanCloseTheElement) {
  json::value v = json::object{{"s", "</script><b>&\xe2\x80\xa8\xe2\x80\xa9"}};
  const std::string out = script_json(v);
  EXPECT_EQ(out.find('<'), std::string::npos);
  EXPECT_EQ(out.find('>'), std::string::npos);
  EXPECT_EQ(out.find('&'), std::string::npos);
  EXPECT_EQ(out.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_NE(out.find("\\u2028\\u2029"), std::string::npos);
  // Still the same JSON.
  EXPECT_EQ(json::parse_text(out).value(), v);
}

TEST(ViewDocumentTest, ModuleComponentsGetAGeneratedDocument) {
  Component c;
  c.type = Component::Type::kInline;
  c.module = "./.hearth/inline.js";
  const std::string doc =
      view_document(c, json::object{{"mountId", "m1"}}, "/views/abc/.hearth/bootstrap.js", "", "");
  EXPECT_NE(
      doc.find(
          R"(<script type="application/json" id="hearth-view-config">{"mountId":"m1"}</script>)"),
      std::string::npos);
  EXPECT_NE(
      doc.find(R"(<script src="/views/abc/.hearth/bootstrap.js"></script></head><body></body>)"),
      std::string::npos);
}

TEST(ViewDocumentTest, HtmlComponentsGetTheTagsFirstInHeadAndTheNonce) {
  Component c;
  c.html = true;
  const std::string html =
      "<!DOCTYPE html><HTML lang=en><Head data-x=1><title>t</title>"
      "<script>inline()</script><script src=\"a.js\"></script><scripts></scripts></head>"
      "<body><p>&lt;script&gt;</p></body></html>";
  const std::string doc =
      view_document(c, json::object{}, "/views/t/.hearth/bootstrap.js", html, "N0");
  const auto head = doc.find("<Head data-x=1>");
  const auto config = doc.find("hearth-view-config");
  const auto title = doc.find("<title>");
  ASSERT_NE(head, std::string::npos);
  EXPECT_LT(head, config);
  EXPECT_LT(config, title);
  EXPECT_NE(doc.find(R"(<script nonce="N0">inline()</script>)"), std::string::npos);
  EXPECT_NE(doc.find(R"(<script nonce="N0" src="a.js">)"), std::string::npos);
  EXPECT_NE(doc.find("<scripts></scripts>"), std::string::npos);  // not a script tag
  // The bootstrap is not given the nonce: 'self' covers it.
  EXPECT_NE(doc.find(R"(<script src="/views/t/.hearth/bootstrap.js">)"), std::string::npos);
}

TEST(ViewDocumentTest, HtmlWithoutHeadGetsTheTagsAfterTheDoctype) {
  Component c;
  c.html = true;
  const std::string doc = view_document(c, json::object{}, "/b.js", "<!doctype html><p>x</p>", "");
  EXPECT_EQ(doc.rfind("<!doctype html><script type=\"application/json\"", 0), 0u);
}

TEST(HeadersTest, ViewFilesAreSandboxedWithNoNetworkAndNoFeatures) {
  Component c;
  c.script_origin = "https://cdn.example.com";
  const Headers h = view_headers(c, "127.0.0.1:5555", "abc");
  const std::string csp = header(h, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self' 'nonce-abc' https://cdn.example.com;"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("object-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("form-action 'none'"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors http://127.0.0.1:5555;"), std::string::npos);
  EXPECT_NE(csp.find("sandbox allow-scripts allow-forms"), std::string::npos);
  EXPECT_EQ(csp.find("allow-same-origin"), std::string::npos);
  const std::string pp = header(h, "Permissions-Policy");
  for (const char* f : {"camera=()", "microphone=()", "geolocation=()", "usb=()", "payment=()"}) {
    EXPECT_NE(pp.find(f), std::string::npos) << f;
  }
  EXPECT_EQ(header(h, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(header(h, "Referrer-Policy"), "no-referrer");
  // Without a nonce or a cdn, scripts come from the view's own files only.
  const std::string plain =
      header(view_headers(Component{}, "localhost:1", ""), "Content-Security-Policy");
  EXPECT_NE(plain.find("script-src 'self';"), std::string::npos);
}

TEST(HeadersTest, ThePageAllowsItsOwnFilesAndWebSocketOnly) {
  const std::string csp = header(page_headers("127.0.0.1:5555"), "Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self' ws://127.0.0.1:5555;"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe"), std::string::npos);
}

TEST(ContentTypeTest, ByExtension) {
  EXPECT_EQ(content_type_of("a/b.JS"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_of("x.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_of("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type_of("s.css"), "text/css; charset=utf-8");
  EXPECT_EQ(content_type_of("i.svg"), "image/svg+xml");
  EXPECT_EQ(content_type_of("README"), "application/octet-stream");
}

}  // namespace
}  // namespace hearth::views
