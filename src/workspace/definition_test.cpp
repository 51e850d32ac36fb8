#include "workspace/definition.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "json/yaml.hpp"

namespace hearth::workspace {
namespace {

struct Parsed {
  std::optional<Definition> def;
  Problems problems;
  bool has(const std::string& path, const std::string& words) const {
    for (const auto& p : problems) {
      if (p.path == path && p.message.find(words) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::string out;
    for (const auto& p : problems) out += p.to_string() + "\n";
    return out;
  }
};

Parsed parse(const std::string& yaml) {
  Parsed out;
  auto doc = json::yaml_to_json(yaml);
  EXPECT_TRUE(doc.ok()) << doc.error().message;
  out.def = parse_definition(doc.value(), std::filesystem::temp_directory_path(), out.problems);
  return out;
}

TEST(WorkspaceDefinition, AValidDefinitionKeepsDeclarationOrder) {
  auto p = parse(R"(
name: todo-assistant
description: Find and tidy todos
completion: {schema: {type: string}}
components:
  - id: search
    states:
      search_box_state:
        permission: rw
        schema: {type: object, properties: {search_pattern: {type: string, maxLength: 300}}}
        initial: {search_pattern: ""}
        sideEffects: A change runs a search
      results: {permission: r, schema: {type: array}, initial: []}
      hidden: {visibility: private, schema: {type: integer}, initial: 0}
    examples:
      - {title: Search, script: "search_box_state.search_pattern = 'x';"}
)");
  ASSERT_TRUE(p.def) << p.all();
  ASSERT_EQ(p.def->states.size(), 3u);
  EXPECT_EQ(p.def->states[0].name, "search_box_state");
  EXPECT_EQ(p.def->states[0].access, Access::kReadWrite);
  EXPECT_EQ(p.def->states[0].side_effects, "A change runs a search");
  EXPECT_FALSE(p.def->states[2].is_public);
  EXPECT_EQ(p.def->examples.size(), 1u);
  EXPECT_TRUE(p.def->completion_schema);
  EXPECT_EQ(p.def->limits.timeout.count(), 5000);
}

TEST(WorkspaceDefinition, ProblemsNameTheirExactPlace) {
  auto p = parse(R"(
name: Bad Name
limits: {timeoutMs: 0}
grants: {network: [":bad:"], extra: 1}
components:
  - id: one
    states:
      a: {permission: x, schema: {type: string}, initial: ""}
      b: {permission: rw, schema: {type: string, maxLength: 2}, initial: "too long"}
      c: {permission: r, initial: 1}
      d: {permission: rw, schema: {type: nope}, initial: 1}
      e: {permission: rw, schema: {type: string}}
      Math: {permission: r, schema: {}, initial: 1}
      f: {permission: rw, schema: {}, initial: 1, source: {service: s, endpoint: e}}
      g:
        permission: rw
        schema: {}
        initial: 1
        sideEffects: {calls: [{service: s, endpoint: e, assign: a}]}
  - id: two
    states:
      a: {permission: r, schema: {}, initial: 1}
)");
  EXPECT_FALSE(p.def);
  EXPECT_TRUE(p.has("name", "1-64 characters")) << p.all();
  EXPECT_TRUE(p.has("limits.timeoutMs", "from 10")) << p.all();
  EXPECT_TRUE(p.has("grants.extra", "not a known member")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.a.permission", "r, w or rw")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.b.initial", "maxLength")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.c.schema", "is required")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.d.schema.type", "")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.e.initial", "is required")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.Math", "reserved")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.f.permission", "read-only")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.g.sideEffects.description", "is required")) << p.all();
  EXPECT_TRUE(p.has("components[1].states.a", "also defined at components[0].states.a")) << p.all();
}

TEST(WorkspaceDefinition, ASideEffectAssignsOnlyStatesTheModelCannotWrite) {
  auto p = parse(R"(
name: x
components:
  - id: c
    states:
      q:
        permission: rw
        schema: {}
        initial: ""
        sideEffects:
          description: searches
          calls: [{service: s, endpoint: e, input: {a: {$state: nope}}, assign: q}]
)");
  EXPECT_FALSE(p.def);
  EXPECT_TRUE(p.has("components[0].states.q.sideEffects.calls[0].assign", "writable")) << p.all();
  EXPECT_TRUE(p.has("components[0].states.q.sideEffects.calls[0].input.a", "$state")) << p.all();
}

TEST(WorkspaceDefinition, UtilitiesAreTopLevelFunctionsWithTheirComments) {
  const auto found = scan_utilities(R"(
// Trims a search.
function normalize(text) {
  function inner(x) { return x; }
  return text.trim();
}
/** Checks a price range. */
async function validatePrice(min, max = 10) { return min <= max; }
const notAFunction = 1;
function* gen() {}
)",
                                    "utils.js");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "normalize");
  EXPECT_EQ(found[0].params, "text");
  EXPECT_EQ(found[0].doc, "Trims a search.");
  EXPECT_EQ(found[1].name, "validatePrice");
  EXPECT_EQ(found[1].params, "min, max = 10");
  EXPECT_TRUE(found[1].is_async);
  EXPECT_EQ(found[1].doc, "Checks a price range.");
  EXPECT_EQ(found[2].name, "gen");
}

TEST(WorkspaceDefinition, Names) {
  EXPECT_TRUE(is_workspace_name("trip-planner_2"));
  EXPECT_FALSE(is_workspace_name("Trip"));
  EXPECT_FALSE(is_workspace_name("-x"));
  EXPECT_FALSE(is_workspace_name(""));
  EXPECT_FALSE(is_workspace_name(std::string(65, 'a')));
}

}  // namespace
}  // namespace hearth::workspace
