#include "js/modules.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace hearth::js {
namespace {

namespace fs = std::filesystem;

class JsModules : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hearth-js-modules-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = fs::canonical(tmpl);
    fs::create_directories(dir_ / "lib");
    fs::create_directories(dir_ / "handlers");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  fs::path dir_;
};

TEST_F(JsModules, ResolvesRelativeImportsInsideTheServiceFolder) {
  write("lib/db.js", "export const x = 1;");
  write("lib/util.mjs", "export const y = 1;");
  write("handlers/todos.mjs", "");
  EXPECT_EQ(resolve_import(dir_, "handlers/todos.mjs", "../lib/db.js").path, "lib/db.js");
  EXPECT_EQ(resolve_import(dir_, "handlers/todos.mjs", "../lib/db").path, "lib/db.js");
  EXPECT_EQ(resolve_import(dir_, "handlers/todos.mjs", "../lib/util").path, "lib/util.mjs");
  EXPECT_EQ(resolve_import(dir_, "lib/db.js", "./util.mjs").path, "lib/util.mjs");
}

TEST_F(JsModules, RefusesPackagesEscapesMissingFilesAndTypeScript) {
  write("main.mjs", "");
  write("types.ts", "");
  EXPECT_NE(resolve_import(dir_, "main.mjs", "lodash").error.find("only relative imports"),
            std::string::npos);
  EXPECT_NE(resolve_import(dir_, "main.mjs", "/etc/passwd").error, "");
  EXPECT_NE(resolve_import(dir_, "main.mjs", "../outside.js").error.find("outside the service"),
            std::string::npos);
  EXPECT_NE(resolve_import(dir_, "main.mjs", "./nope.js").error.find("does not exist"),
            std::string::npos);
  EXPECT_NE(resolve_import(dir_, "main.mjs", "./types.ts").error.find("TypeScript"),
            std::string::npos);
  fs::create_symlink("/etc", dir_ / "etc-link");
  EXPECT_NE(resolve_import(dir_, "main.mjs", "./etc-link/passwd").error.find("outside"),
            std::string::npos);
}

TEST(JsModuleKind, TellsModulesFromScripts) {
  EXPECT_TRUE(is_es_module("a.mjs", "var x = 1;"));
  EXPECT_FALSE(is_es_module("a.cjs", "export const x = 1;"));
  EXPECT_TRUE(is_es_module("a.js", "// hi\n  export function f() {}"));
  EXPECT_TRUE(is_es_module("a.js", "import {x} from './b.js';"));
  EXPECT_TRUE(is_es_module("a.js", "export{f};"));
  EXPECT_FALSE(is_es_module("a.js", "module.exports.f = function () {};\nconst exporter = 1;"));
  EXPECT_FALSE(is_es_module("a.js", "function f(input, ctx) { return input; }"));
  EXPECT_NE(typescript_refusal("x/y.ts"), "");
  EXPECT_NE(typescript_refusal("x/y.tsx"), "");
  EXPECT_EQ(typescript_refusal("x/y.js"), "");
}

TEST_F(JsModules, ScansTheImportGraph) {
  write("handlers/todos.mjs",
        "import { db } from '../lib/db.js';\nimport \"./side.js\";\nexport * from './re.mjs';\n"
        "const later = () => import('../lib/lazy.mjs');\nimport x from 'pkg';\n");
  write("handlers/side.js", "");
  write("handlers/re.mjs", "export { y } from '../lib/util.mjs';");
  write("lib/db.js", "import {y} from './util.mjs'; export const db = 1;");
  write("lib/util.mjs", "export const y = 1;");
  write("lib/lazy.mjs", "");
  auto found = scan_imports(dir_, "handlers/todos.mjs");
  std::sort(found.begin() + 1, found.end());
  EXPECT_EQ(found,
            (std::vector<std::string>{"handlers/todos.mjs", "handlers/re.mjs", "handlers/side.js",
                                      "lib/db.js", "lib/lazy.mjs", "lib/util.mjs"}));
}

TEST_F(JsModules, ImportProblemsNameEveryStaticImportThatCannotLoad) {
  // Outside the folder (also through a module it imports), a package, a missing file: refused
  // at load rather than at every call.
  fs::create_directories(dir_.parent_path() / (dir_.filename().string() + "-other"));
  write("lib/ok.mjs", "export const ok = 1;\nexport { x } from '../../" + dir_.filename().string() +
                          "-other/x.mjs';\n");
  write("handlers/main.mjs",
        "import { ok } from '../lib/ok.mjs';\n"
        "import fs from 'fs';\n"
        "import '../missing.mjs';\n"
        "// import nope from '../../commented.mjs';\n"
        "/* import nope from '../../block.mjs'; */\n"
        "const s = \"import x from '../../in-a-string.mjs'\";\n"
        "const later = () => import('../../dynamic.mjs');\n"
        "export function f() { return Array.from('ab'); }\n");
  auto problems = import_problems(dir_, "handlers/main.mjs");
  ASSERT_EQ(problems.size(), 3u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find("handlers/main.mjs: cannot import 'fs'"), std::string::npos);
  EXPECT_NE(problems[1].find("handlers/main.mjs: cannot import '../missing.mjs'"),
            std::string::npos);
  EXPECT_NE(problems[2].find("lib/ok.mjs: cannot import"), std::string::npos);
  EXPECT_NE(problems[2].find("outside the service folder"), std::string::npos);
  fs::remove_all(dir_.parent_path() / (dir_.filename().string() + "-other"));

  write("lib/ok.mjs", "export const ok = 1;\n");
  write("handlers/good.mjs", "import { ok } from '../lib/ok';\nexport const f = () => ok;\n");
  EXPECT_TRUE(import_problems(dir_, "handlers/good.mjs").empty());
  // A plain script has no static imports.
  write("handlers/plain.js", "module.exports = { f() { return 'import x from \"y\"'; } };\n");
  EXPECT_TRUE(import_problems(dir_, "handlers/plain.js").empty());
}

}  // namespace
}  // namespace hearth::js
