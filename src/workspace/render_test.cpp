#include "workspace/render.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "json/yaml.hpp"

namespace hearth::workspace {
namespace {

Definition definition(const std::string& yaml) {
  Problems problems;
  auto doc = json::yaml_to_json(yaml);
  EXPECT_TRUE(doc.ok());
  auto def = parse_definition(doc.value(), std::filesystem::temp_directory_path(), problems);
  for (const auto& p : problems) ADD_FAILURE() << p.to_string();
  return def ? *def : Definition{};
}

const char* const kYaml = R"(
name: search
description: 検索 workspace
components:
  - id: search
    states:
      search_box_state:
        permission: rw
        schema:
          type: object
          required: [search_pattern]
          properties:
            search_pattern: {type: string, maxLength: 300}
            tags: {type: array, items: {type: string}}
        initial: {search_pattern: ""}
        sideEffects:
          description: Any change of this state runs a search and refreshes the results shown below it
          calls: [{service: todos, endpoint: search, assign: results}]
      results: {permission: r, schema: {type: array, items: {$ref: "#/types/Todo"}}, initial: []}
      secret: {permission: w, schema: {type: string}, initial: "hidden value"}
      internal: {visibility: private, schema: {type: string}, initial: "private value"}
    examples:
      - {title: Search, script: "search_box_state.search_pattern = 'milk';"}
types:
  Todo: {type: object, properties: {id: {type: integer}}}
)";

TEST(WorkspaceRender, CompactTypes) {
  auto t = [](const char* schema) { return compact_type(boost::json::parse(schema)); };
  EXPECT_EQ(
      t(R"({"type":"object","required":["a"],"properties":{"a":{"type":"string","maxLength":300},"b":{"type":"integer","minimum":0}}})"),
      "{ a: string (≤300), b?: integer (≥0) }");
  EXPECT_EQ(t(R"({"type":"array","items":{"type":"string"}})"), "string[]");
  EXPECT_EQ(t(R"({"enum":["a","b"]})"), R"("a" | "b")");
  EXPECT_EQ(t(R"({"type":["string","null"]})"), "string | null");
  EXPECT_EQ(t(R"({"$ref":"#/types/Todo"})"), "Todo");
  EXPECT_EQ(t(R"({"type":"string","format":"date"})"), "string (date)");
  EXPECT_EQ(t(R"({"anyOf":[{"type":"number"},{"type":"boolean"}]})"), "number | boolean");
  EXPECT_EQ(t(R"({})"), "any");
}

TEST(WorkspaceRender, TextBoxesAreAlignedAndHideWhatTheModelMayNotSee) {
  const Definition def = definition(kYaml);
  json::object state{{"search_box_state", boost::json::parse(R"({"search_pattern":"milk"})")},
                     {"results", json::array()},
                     {"secret", "hidden value"},
                     {"internal", "private value"}};
  const std::string text = render(def, 3, state, {});
  EXPECT_NE(text.find("VIRTUAL WORKSPACE: search (v3)"), std::string::npos);
  EXPECT_NE(text.find("READ_AND_WRITE (rw)"), std::string::npos);
  EXPECT_NE(text.find("{ search_pattern: string (≤300), tags?: string[] }"), std::string::npos);
  EXPECT_NE(text.find("\"milk\""), std::string::npos);
  EXPECT_NE(text.find("→ calls todos/search, result into results (irreversible)"),
            std::string::npos);
  EXPECT_NE(text.find("write-only"), std::string::npos);
  EXPECT_EQ(text.find("hidden value"), std::string::npos);
  EXPECT_EQ(text.find("private value"), std::string::npos);
  EXPECT_EQ(text.find("internal"), std::string::npos);
  EXPECT_NE(text.find("execute_script(script: string)"), std::string::npos);
  EXPECT_NE(text.find("search_box_state.search_pattern = 'milk';"), std::string::npos);
  // Every line of a box is 78 columns wide, wide characters included.
  std::size_t start = 0;
  int box_lines = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    const std::string_view line(text.data() + start, end - start);
    if (line.starts_with("│") || line.starts_with("┌") || line.starts_with("└") ||
        line.starts_with("├")) {
      EXPECT_EQ(display_width(line), 78u) << line;
      ++box_lines;
    }
    start = end + 1;
  }
  EXPECT_GT(box_lines, 20);
}

TEST(WorkspaceRender, LargeValuesAreElidedWithinTheBudget) {
  const Definition def = definition(kYaml);
  json::array many;
  for (int i = 0; i < 5000; ++i) many.push_back(json::object{{"id", i}});
  json::object state{{"search_box_state", boost::json::parse(R"({"search_pattern":""})")},
                     {"results", many},
                     {"secret", ""},
                     {"internal", ""}};
  RenderOptions options;
  options.budget = 6000;
  for (Format f : {Format::kText, Format::kMarkdown}) {
    options.format = f;
    const std::string text = render(def, 1, state, options);
    EXPECT_LT(text.size(), 12000u);
    EXPECT_NE(text.find("elided"), std::string::npos);
    EXPECT_NE(text.find("workspace/state"), std::string::npos);
  }
  options.format = Format::kJson;
  auto view = boost::json::parse(render(def, 1, state, options)).as_object();
  const auto& results = view.at("states").as_array()[1].as_object();
  EXPECT_TRUE(results.contains("elided"));
  EXPECT_FALSE(results.contains("value"));
}

TEST(WorkspaceRender, ManyLargeStatesStayNearTheBudget) {
  // 60 states of 1,000 items: the definitions alone nearly fill the budget, so the values shrink
  // to their notes (small ones are still shown whole).
  std::string yaml = "name: many\ncomponents:\n  - id: c\n    states:\n";
  json::object state;
  json::array many;
  for (int i = 0; i < 1000; ++i) many.push_back(json::object{{"id", i}});
  for (int i = 0; i < 60; ++i) {
    const std::string name = "s" + std::to_string(i);
    yaml += "      " + name + ": {permission: r, schema: {type: array}, initial: []}\n";
    state[name] = i == 0 ? json::value(json::array{1}) : json::value(many);
  }
  const Definition def = definition(yaml);
  RenderOptions options;
  options.guide = false;
  options.budget = 40000;
  const std::string text = render(def, 1, state, options);
  EXPECT_LT(text.size(), 80000u);  // the frame's boxes are 3-byte characters
  EXPECT_NE(text.find("[1]"), std::string::npos);
  EXPECT_NE(text.find("elided"), std::string::npos);
}

TEST(WorkspaceRender, MarkdownAndJsonForms) {
  const Definition def = definition(kYaml);
  json::object state{{"search_box_state", boost::json::parse(R"({"search_pattern":"x"})")},
                     {"results", json::array()},
                     {"secret", "hidden value"},
                     {"internal", "p"}};
  RenderOptions options;
  options.format = Format::kMarkdown;
  const std::string md = render(def, 2, state, options);
  EXPECT_NE(md.find("# Workspace: search (v2)"), std::string::npos);
  EXPECT_NE(md.find("## search_box_state"), std::string::npos);
  EXPECT_NE(md.find("```json"), std::string::npos);
  EXPECT_EQ(md.find("hidden value"), std::string::npos);
  options.format = Format::kJson;
  auto view = boost::json::parse(render(def, 2, state, options)).as_object();
  EXPECT_EQ(view.at("version"), 2);
  const auto& states = view.at("states").as_array();
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[2].at("writeOnly"), true);
  EXPECT_FALSE(states[2].as_object().contains("value"));
  EXPECT_EQ(states[0].at("permission"), "rw");
  EXPECT_EQ(view.at("tools").as_array().size(), 2u);
}

}  // namespace
}  // namespace hearth::workspace

namespace hearth::workspace {
namespace {

TEST(WorkspaceRender, APrivateStateAResultGoesIntoIsNotNamed) {
  const Definition def = definition(R"(
name: mail
components:
  - id: mail
    states:
      draft:
        permission: rw
        schema: {type: object}
        initial: {}
        sideEffects:
          description: sends it
          calls: [{service: mail, endpoint: send, assign: receipt_store}]
      receipt_store: {visibility: private, schema: {type: object}, initial: {}}
)");
  json::object state{{"draft", json::object()}, {"receipt_store", json::object()}};
  for (auto format : {Format::kText, Format::kMarkdown, Format::kJson}) {
    RenderOptions options;
    options.format = format;
    const std::string view = render(def, 1, state, options);
    EXPECT_EQ(view.find("receipt_store"), std::string::npos) << view;
    EXPECT_NE(view.find("a private state"), std::string::npos) << view;
  }
}

// A model reads these views: numbers as people write them, never Boost.JSON's 4.25E1.
TEST(WorkspaceRender, NumbersAreWrittenAsPeopleWriteThem) {
  const Definition def = definition(R"(
name: trip
components:
  - id: trip
    states:
      budget:
        permission: rw
        schema: {type: object, properties: {total: {type: number, minimum: 0.5, maximum: 1000.5}}}
        initial: {total: 42.5}
)");
  json::object state{
      {"budget", boost::json::parse(R"({"total":42.5,"spent":[0.1,0.30000000000000004,100.0]})")}};
  EXPECT_EQ(compact_type(def.states[0].schema_json), "{ total?: number (≥0.5, ≤1000.5) }");
  for (auto format : {Format::kText, Format::kMarkdown, Format::kJson}) {
    RenderOptions options;
    options.format = format;
    const std::string view = render(def, 1, state, options);
    EXPECT_NE(view.find("42.5"), std::string::npos) << view;
    EXPECT_NE(view.find("[0.1,0.30000000000000004,100]"), std::string::npos) << view;
    EXPECT_EQ(view.find("E1"), std::string::npos) << view;
    EXPECT_EQ(view.find("E-1"), std::string::npos) << view;
  }
}

}  // namespace
}  // namespace hearth::workspace
