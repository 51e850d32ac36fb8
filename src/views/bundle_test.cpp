#include "views/bundle.hpp"

#include <gtest/gtest.h>

#include "host/testing.hpp"

namespace hearth::views {
namespace {
using host::testing::TempService;

class BundleTest : public ::testing::Test {
 protected:
  Result<Bundle> bundle(const std::string& entry, bool may_import = true,
                        const BundleLimits& limits = {}) {
    return bundle_modules(service_.dir(), entry, std::nullopt, may_import, limits);
  }
  /// The error message of bundling `entry` (which must fail).
  std::string refusal(const std::string& entry) {
    auto b = bundle(entry);
    EXPECT_FALSE(b.ok()) << entry << " was bundled";
    if (b.ok()) return {};
    EXPECT_EQ(b.error().code, ErrorCode::kInvalidParams);
    return b.error().message;
  }
  TempService service_{"{}"};
};

TEST_F(BundleTest, EntryAndItsImportsBecomeOneScriptInImportOrder) {
  service_.write("pkg/view.js",
                 "import { styles } from './styles.js';\n"
                 "import helper, * as lib from './lib/helper.js';\n"
                 "export default class TodoListView extends HTMLElement {}\n");
  service_.write("pkg/styles.js", "export const styles = `a { color: red }`;\n");
  service_.write("pkg/lib/helper.js",
                 "import { styles } from '../styles.js';\nexport default function () { return "
                 "styles; }\nexport function other() {}\n");
  auto b = bundle_modules(service_.dir() / "pkg", "view.js", std::nullopt, true);
  ASSERT_TRUE(b.ok()) << b.error().message;
  const Bundle& out = b.value();
  EXPECT_EQ(out.modules, (std::vector<std::string>{"view.js", "styles.js", "lib/helper.js"}));
  EXPECT_EQ(out.entry, R"(__hearth_import("view.js"))");
  const std::string& s = out.script;
  // Every module is defined once, its dependencies before it.
  EXPECT_LT(s.find(R"(__hearth_define("styles.js")"), s.find(R"(__hearth_define("lib/helper.js")"));
  EXPECT_LT(s.find(R"(__hearth_define("lib/helper.js")"), s.find(R"(__hearth_define("view.js")"));
  EXPECT_EQ(s.find("__hearth_define(\"styles.js\"", s.find("__hearth_define(\"styles.js\"") + 1),
            std::string::npos);
  // The statements are rewritten: no import or export is left.
  EXPECT_EQ(s.find("import {"), std::string::npos) << s;
  EXPECT_EQ(s.find("export "), std::string::npos) << s;
  EXPECT_NE(s.find(R"(const __hearth_m0 = await __hearth_import("styles.js");)"),
            std::string::npos);
  EXPECT_NE(s.find(R"(const styles = __hearth_m0["styles"];)"), std::string::npos);
  EXPECT_NE(s.find(R"(const helper = __hearth_m1["default"];)"), std::string::npos);
  EXPECT_NE(s.find("const lib = __hearth_m1;"), std::string::npos);
  EXPECT_NE(s.find(R"("default": () => TodoListView)"), std::string::npos);
  EXPECT_NE(s.find("class TodoListView extends HTMLElement {}"), std::string::npos);
  EXPECT_NE(s.find("function __hearth_default () { return styles; }"), std::string::npos) << s;
  EXPECT_NE(s.find(R"("other": () => other)"), std::string::npos);
  EXPECT_NE(s.find("const styles = `a { color: red }`;"), std::string::npos);
}

TEST_F(BundleTest, EveryExportForm) {
  service_.write("m.js",
                 "export const a = 1, b = f(1, 2)\n"
                 "export let c\n"
                 "export var d = { x: [1, 2] };\n"
                 "export async function e() {}\n"
                 "export function* g() {}\n"
                 "export class H {}\n"
                 "const i = 2;\nexport { i, i as j, i as 'k-l' };\n"
                 "export { y as z } from './n.js';\n"
                 "export * from './n.js';\n"
                 "export * as ns from './n.js';\n"
                 "export default a + 1;\n");
  service_.write("n.js", "export const y = 1;\n");
  auto b = bundle("m.js");
  ASSERT_TRUE(b.ok()) << b.error().message;
  const std::string& s = b.value().script;
  for (const char* getter :
       {R"("a": () => a)", R"("b": () => b)", R"("c": () => c)", R"("d": () => d)",
        R"("e": () => e)", R"("g": () => g)", R"("H": () => H)", R"("i": () => i)",
        R"("j": () => i)", R"("k-l": () => i)", R"("z": () => __hearth_m0["y"])",
        R"("ns": () => __hearth_m2)", R"("default": () => __hearth_named(__hearth_default))"}) {
    EXPECT_NE(s.find(getter), std::string::npos) << getter << "\n" << s;
  }
  EXPECT_NE(s.find("__hearth_export_star(__hearth_ns, __hearth_m1);"), std::string::npos);
  EXPECT_NE(s.find("const a = 1, b = f(1, 2)\nlet c\nvar d"), std::string::npos) << s;
  EXPECT_NE(s.find("const __hearth_default = a + 1;"), std::string::npos);
  EXPECT_EQ(s.find("export "), std::string::npos) << s;
}

TEST_F(BundleTest, ImportAndExportInsideStringsCommentsRegexesAndTemplatesAreLeftAlone) {
  service_.write("m.js",
                 "// import x from 'nowhere';\n"
                 "/* export * from 'nowhere'; */\n"
                 "const s = \"import y from 'nowhere'\";\n"
                 "const r = /import ['\"]\\/x/g, half = 4 / 2 / 1;\n"
                 "const t = `export ${ { a: `import z from 'nowhere'` }.a } }`;\n"
                 "const o = { import: 1, export: 2, import() {} };\n"
                 "o.import(); o.export;\n"
                 "if (true) { /re/.test(s); }\n"
                 "export { s };\n");
  auto b = bundle("m.js");
  ASSERT_TRUE(b.ok()) << b.error().message;
  const std::string& s = b.value().script;
  EXPECT_EQ(b.value().modules.size(), 1U);
  EXPECT_NE(s.find("// import x from 'nowhere';"), std::string::npos);
  EXPECT_NE(s.find(R"(const r = /import ['"]\/x/g, half = 4 / 2 / 1;)"), std::string::npos);
  EXPECT_NE(s.find("const o = { import: 1, export: 2, import() {} };"), std::string::npos);
  EXPECT_NE(s.find(R"("s": () => s)"), std::string::npos);
}

TEST_F(BundleTest, AnonymousDefaultsGetALocalName) {
  service_.write("c.js", "export default class extends HTMLElement {}\n");
  service_.write("f.js", "export default async function* (x) {}\n");
  auto c = bundle("c.js");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c.value().script.find("class __hearth_default extends HTMLElement {}"),
            std::string::npos);
  auto f = bundle("f.js");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_NE(f.value().script.find("async function* __hearth_default (x) {}"), std::string::npos)
      << f.value().script;
}

TEST_F(BundleTest, WhatCannotBeBundledIsRefusedWithItsPlace) {
  service_.write("bare.js", "import lit from 'lit';\n");
  EXPECT_NE(refusal("bare.js").find("bare.js:1: imports 'lit': only relative imports"),
            std::string::npos);
  service_.write("url.js", "\n\nimport x from 'https://cdn.example.com/x.js';\n");
  EXPECT_NE(refusal("url.js").find("url.js:3:"), std::string::npos);
  service_.write("dynamic.js", "const m = await import('./bare.js');\n");
  EXPECT_NE(refusal("dynamic.js").find("dynamic import()"), std::string::npos);
  service_.write("meta.js", "const u = import.meta.url;\n");
  EXPECT_NE(refusal("meta.js").find("import.meta"), std::string::npos);
  service_.write("json.js", "import data from './data.json' with { type: 'json' };\n");
  EXPECT_NE(refusal("json.js").find("import attributes"), std::string::npos);
  service_.write("destructure.js", "export const { a, b } = obj;\n");
  EXPECT_NE(refusal("destructure.js").find("destructuring"), std::string::npos);
  service_.write("missing.js", "import './nope.js';\n");
  EXPECT_NE(refusal("missing.js").find("missing.js imports nope.js, which is missing"),
            std::string::npos);
  service_.write("out/up.js", "import '../../x.js';\n");
  EXPECT_NE(refusal("out/up.js").find("outside the view's folder"), std::string::npos);
  service_.write("a.js", "import './b.js';\n");
  service_.write("b.js", "import './a.js';\n");
  EXPECT_NE(refusal("a.js").find("import cycles are not bundled"), std::string::npos);
  service_.write("open.js", "const s = 'not closed;\n");
  EXPECT_NE(refusal("open.js").find("open.js: a string is not closed (line 1)"), std::string::npos);
  service_.write("ts.js", "import type { A } from './a.js';\n");
  EXPECT_NE(refusal("ts.js").find("not one the bundler reads"), std::string::npos);
  service_.write("end.js", "const a = 1;\nexport");
  EXPECT_NE(refusal("end.js").find("end.js:2: the module ends inside an export"),
            std::string::npos);
  service_.write("end_default.js", "export default");
  EXPECT_NE(refusal("end_default.js").find("ends inside an export"), std::string::npos);
  service_.write("end_import.js", "import { a } from");
  EXPECT_NE(refusal("end_import.js").find("not one the bundler reads"), std::string::npos);
  auto entry_only = bundle("a.js", /*may_import=*/false);
  ASSERT_FALSE(entry_only.ok());
  EXPECT_NE(entry_only.error().message.find("may import nothing"), std::string::npos);
  auto none = bundle("absent.js");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("the view module absent.js"), std::string::npos);
}

TEST_F(BundleTest, LimitsOnModulesAndBytes) {
  service_.write("one.js", "import './two.js';\n");
  service_.write("two.js", "export const x = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';\n");
  BundleLimits modules;
  modules.max_modules = 1;
  auto many = bundle("one.js", true, modules);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find("more than 1 modules"), std::string::npos);
  BundleLimits bytes;
  bytes.max_bytes = 40;
  auto large = bundle("one.js", true, bytes);
  ASSERT_FALSE(large.ok());
  EXPECT_TRUE(large.error().message.find("larger than 40 bytes") != std::string::npos ||
              large.error().message.find("too large") != std::string::npos)
      << large.error().message;
}

TEST_F(BundleTest, InlineEntryTextImportsNothing) {
  auto b = bundle_modules(
      service_.dir(), "inline.js",
      std::string("customElements.define('x-y', class extends HTMLElement {});"), false);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_NE(b.value().script.find("customElements.define('x-y'"), std::string::npos);
  auto importing =
      bundle_modules(service_.dir(), "inline.js", std::string("import './x.js';"), false);
  ASSERT_FALSE(importing.ok());
}

TEST(ScriptText, CannotCloseItsElementNorHideItsEnd) {
  EXPECT_EQ(script_text("a = '</script>'; b = '<!--<script>'"),
            R"(a = '<\/script>'; b = '<\!--<script>')");
  EXPECT_EQ(script_text("x < y / z"), "x < y / z");
}

}  // namespace
}  // namespace hearth::views
