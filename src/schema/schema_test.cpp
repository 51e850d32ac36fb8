#include "schema/schema.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "schema/testing.hpp"
#include "schema/violations.hpp"

namespace hearth::schema {
namespace {

using testing::describe;

json::value parse(std::string_view text) {
  return json::parse(text);
}
json::object parse_object(std::string_view text) {
  return json::parse(text).as_object();
}

class SchemaTest : public ::testing::Test {
 protected:
  std::shared_ptr<const Schema> compile(std::string_view schema, std::string_view types = "{}") {
    Problems problems;
    auto compiled = compiler_->compile(parse(schema), parse_object(types), problems);
    EXPECT_TRUE(problems.empty()) << describe(problems);
    EXPECT_NE(compiled, nullptr);
    return compiled;
  }

  Problems problems_of(std::string_view schema, std::string_view types = "{}") {
    Problems problems;
    auto compiled = compiler_->compile(parse(schema), parse_object(types), problems);
    EXPECT_EQ(compiled, nullptr) << "expected the schema to be refused";
    return problems;
  }

  /// The violations of `instance`, which must have exactly one.
  Violation only_violation(std::string_view schema, std::string_view instance,
                           std::string_view types = "{}") {
    auto compiled = compile(schema, types);
    if (compiled == nullptr) return {};
    const auto violations = compiled->validate(parse(instance));
    EXPECT_EQ(violations.size(), 1u)
        << schema << " vs " << instance << ": " << describe(violations);
    return violations.empty() ? Violation{} : violations.front();
  }

  std::unique_ptr<Compiler> compiler_ = make_draft7_compiler();
};

// --- types and $ref -----------------------------------------------------------------------------

constexpr std::string_view kTodoTypes = R"({
  "Todo": {
    "type": "object",
    "required": ["id", "text"],
    "properties": {
      "id": {"type": "integer"},
      "text": {"type": "string"},
      "tags": {"type": "array", "items": {"$ref": "#/types/Tag"}}
    }
  },
  "Tag": {"type": "string", "minLength": 1}
})";

TEST_F(SchemaTest, RootRefResolvesToType) {
  auto schema = compile(R"({"$ref": "#/types/Todo"})", kTodoTypes);
  ASSERT_NE(schema, nullptr);
  EXPECT_TRUE(schema->validate(parse(R"({"id": 1, "text": "milk"})")).empty());
  const auto violations = schema->validate(parse(R"({"id": "1", "text": "milk"})"));
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].field, "id");
  EXPECT_EQ(violations[0].constraint, "type");
}

TEST_F(SchemaTest, TypeRefersToAnotherType) {
  const Violation v =
      only_violation(R"({"type": "object", "properties": {"todo": {"$ref": "#/types/Todo"}}})",
                     R"({"todo": {"id": 1, "text": "a", "tags": ["x", ""]}})", kTodoTypes);
  EXPECT_EQ(v.field, "todo.tags[1]");
  EXPECT_EQ(v.constraint, "minLength");
  EXPECT_EQ(v.message, "must be at least 1 characters long");
}

TEST_F(SchemaTest, RecursiveTypeValidatesAtDepth) {
  constexpr std::string_view kTypes = R"({
    "Node": {
      "type": "object",
      "required": ["value"],
      "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/types/Node"}}
      }
    }
  })";
  auto schema = compile(R"({"$ref": "#/types/Node"})", kTypes);
  ASSERT_NE(schema, nullptr);
  EXPECT_TRUE(schema->validate(parse(R"({"value": 1, "children": [{"value": 2, "children": []}]})"))
                  .empty());
  const auto violations = schema->validate(parse(
      R"({"value": 1, "children": [{"value": 2, "children": [{"value": 3}, {"value": "x"}]}]})"));
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].field, "children[0].children[1].value");
  EXPECT_EQ(violations[0].constraint, "type");
}

TEST_F(SchemaTest, MutuallyRecursiveTypes) {
  constexpr std::string_view kTypes = R"({
    "A": {"type": "object", "properties": {"b": {"$ref": "#/types/B"}}},
    "B": {"type": "object", "properties": {"a": {"$ref": "#/types/A"}, "n": {"type": "number"}}}
  })";
  const Violation v =
      only_violation(R"({"$ref": "#/types/A"})", R"({"b": {"a": {"b": {"n": true}}}})", kTypes);
  EXPECT_EQ(v.field, "b.a.b.n");
  EXPECT_EQ(v.constraint, "type");
}

TEST_F(SchemaTest, TypeNamesAreJsonPointerTokens) {
  const Violation v = only_violation(
      R"({"properties": {"a": {"$ref": "#/types/x~1y"},
                                                        "b": {"$ref": "#/types/with%20space"}}})",
      R"({"a": 1, "b": 2})", R"({"x/y": {"type": "integer"}, "with space": {"type": "string"}})");
  EXPECT_EQ(v.field, "b");
  EXPECT_EQ(v.constraint, "type");
}

TEST_F(SchemaTest, LocalDefinitionsStillResolve) {
  const Violation v = only_violation(
      R"({"definitions": {"n": {"type": "integer"}},
          "properties": {"x": {"$ref": "#/definitions/n"}}})",
      R"({"x": 1.5})");
  EXPECT_EQ(v.field, "x");
  EXPECT_EQ(v.constraint, "type");
}

TEST_F(SchemaTest, UnknownTypeRefIsAProblemWithItsPath) {
  const Problems problems =
      problems_of(R"({"type": "array", "items": {"$ref": "#/types/Foo"}})", kTodoTypes);
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "items.$ref");
  EXPECT_EQ(problems[0].message, "'#/types/Foo' does not name a type in 'types'");
}

TEST_F(SchemaTest, UnknownTypeRefInsideATypeIsReportedUnderTypes) {
  const Problems problems =
      problems_of(R"({"$ref": "#/types/Todo"})",
                  R"({"Todo": {"properties": {"owner": {"$ref": "#/types/User"}}}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "types.Todo.properties.owner.$ref");
  EXPECT_EQ(problems[0].message, "'#/types/User' does not name a type in 'types'");
}

TEST_F(SchemaTest, DanglingLocalPointerIsAProblem) {
  const Problems problems = problems_of(R"({"properties": {"a": {"$ref": "#/definitions/nope"}}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "properties.a.$ref");
}

TEST_F(SchemaTest, RemoteRefsAreRefused) {
  for (const char* ref : {"http://example.com/schema.json", "other.json#/definitions/x",
                          "https://localhost:1234/integer.json"}) {
    const Problems problems =
        problems_of(std::string(R"({"properties": {"a": {"$ref": ")") + ref + R"("}}})");
    ASSERT_EQ(problems.size(), 1u) << ref << ": " << describe(problems);
    EXPECT_EQ(problems[0].path, "properties.a.$ref");
    EXPECT_NE(problems[0].message.find("never fetches"), std::string::npos) << problems[0].message;
  }
}

TEST_F(SchemaTest, EndlessReferenceLoopsAreProblems) {
  Problems problems =
      problems_of(R"({"$ref": "#/types/Loop"})", R"({"Loop": {"$ref": "#/types/Loop"}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "types.Loop.$ref");

  problems = problems_of(R"({"$ref": "#/types/A"})",
                         R"({"A": {"anyOf": [{"type": "string"}, {"$ref": "#/types/B"}]},
                             "B": {"allOf": [{"$ref": "#/types/A"}]}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_NE(problems[0].message.find("never end"), std::string::npos);

  problems = problems_of(R"({"not": {"$ref": "#"}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "not.$ref");
}

TEST_F(SchemaTest, MetaSchemaRefIsBuiltIn) {
  auto schema = compile(R"({"$ref": "http://json-schema.org/draft-07/schema#"})");
  ASSERT_NE(schema, nullptr);
  EXPECT_TRUE(schema->validate(parse(R"({"type": "string", "minLength": 2})")).empty());
  EXPECT_FALSE(schema->validate(parse(R"({"type": 5})")).empty());
  EXPECT_FALSE(schema->validate(parse(R"({"minLength": -1})")).empty());
}

// --- invalid schemas ----------------------------------------------------------------------------

TEST_F(SchemaTest, InvalidKeywordValuesAreProblemsWithPaths) {
  struct Case {
    const char* schema;
    const char* path;
  };
  for (const Case& c :
       {Case{R"({"type": 5})", "type"}, Case{R"({"type": "text"})", "type"},
        Case{R"({"minLength": -1})", "minLength"}, Case{R"({"required": "id"})", "required"},
        Case{R"({"properties": {"a": 5}})", "properties.a"},
        Case{R"({"items": [{"maximum": "ten"}]})", "items[0].maximum"},
        Case{R"({"allOf": []})", "allOf"}}) {
    const Problems problems = problems_of(c.schema);
    ASSERT_EQ(problems.size(), 1u) << c.schema << ": " << describe(problems);
    EXPECT_EQ(problems[0].path, c.path) << c.schema;
    EXPECT_FALSE(problems[0].message.empty());
  }
}

TEST_F(SchemaTest, InvalidSchemaInsideAUsedTypeIsReportedUnderTypes) {
  const Problems problems =
      problems_of(R"({"$ref": "#/types/T"})", R"({"T": {"properties": {"n": {"minimum": "0"}}}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "types.T.properties.n.minimum");
}

TEST_F(SchemaTest, NonSchemaDocumentIsAProblem) {
  for (const char* text : {"5", R"("object")", "[]", "null"}) {
    const Problems problems = problems_of(text);
    ASSERT_EQ(problems.size(), 1u) << text << ": " << describe(problems);
    EXPECT_EQ(problems[0].path, "");
  }
}

TEST_F(SchemaTest, InvalidRegularExpressionsAreProblems) {
  Problems problems = problems_of(R"({"properties": {"a": {"pattern": "(unclosed"}}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "properties.a.pattern");
  EXPECT_NE(problems[0].message.find("regular expression"), std::string::npos);

  problems = problems_of(R"({"patternProperties": {"[a-": {}}})");
  ASSERT_EQ(problems.size(), 1u) << describe(problems);
  EXPECT_EQ(problems[0].path, "patternProperties.[a-");
}

TEST_F(SchemaTest, CompileAppendsToExistingProblems) {
  Problems problems{{"earlier", "an unrelated problem"}};
  EXPECT_NE(compiler_->compile(parse(R"({"type": "string"})"), {}, problems), nullptr);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(compiler_->compile(parse(R"({"type": 1})"), {}, problems), nullptr);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].path, "earlier");
  EXPECT_EQ(problems[1].path, "type");
}

// --- boolean schemas ----------------------------------------------------------------------------

TEST_F(SchemaTest, BooleanSchemas) {
  auto yes = compile("true");
  auto no = compile("false");
  ASSERT_TRUE(yes && no);
  for (const char* instance : {"null", "1", R"("s")", R"({"a": [1]})"}) {
    EXPECT_TRUE(yes->validate(parse(instance)).empty()) << instance;
    const auto violations = no->validate(parse(instance));
    ASSERT_EQ(violations.size(), 1u) << instance;
    EXPECT_EQ(violations[0].field, "");
  }
  const Violation v = only_violation(R"({"properties": {"secret": false}})", R"({"secret": 1})");
  EXPECT_EQ(v.field, "secret");
  EXPECT_EQ(v.constraint, "properties");
}

// --- violations ---------------------------------------------------------------------------------

TEST_F(SchemaTest, RequiredNamesTheMissingProperty) {
  const Violation v =
      only_violation(R"({"type": "object", "required": ["text"]})", R"({"done": true})");
  EXPECT_EQ(v.field, "text");
  EXPECT_EQ(v.constraint, "required");
  EXPECT_EQ(v.message, "'text' is required");

  const Violation nested =
      only_violation(R"({"properties": {"a": {"properties": {"b": {"required": ["c"]}}}}})",
                     R"({"a": {"b": {}}})");
  EXPECT_EQ(nested.field, "a.b.c");
  EXPECT_EQ(nested.constraint, "required");
}

TEST_F(SchemaTest, EveryMissingRequiredPropertyIsReported) {
  auto schema = compile(R"({"required": ["a", "b", "c"]})");
  ASSERT_NE(schema, nullptr);
  const auto violations = schema->validate(parse(R"({"b": 1})"));
  ASSERT_EQ(violations.size(), 2u) << describe(violations);
  EXPECT_EQ(violations[0].field, "a");
  EXPECT_EQ(violations[1].field, "c");
}

TEST_F(SchemaTest, TypeViolationSaysWhatWasExpected) {
  Violation v =
      only_violation(R"({"properties": {"count": {"type": "integer"}}})", R"({"count": "3"})");
  EXPECT_EQ(v.field, "count");
  EXPECT_EQ(v.constraint, "type");
  EXPECT_EQ(v.message, "must be of type integer, not string");

  v = only_violation(R"({"type": ["string", "null"]})", "4.5");
  EXPECT_EQ(v.field, "");
  EXPECT_EQ(v.message, "must be of type string or null, not number");
}

TEST_F(SchemaTest, IntegralNumbersAreIntegers) {
  auto schema = compile(R"({"type": "integer"})");
  ASSERT_NE(schema, nullptr);
  EXPECT_TRUE(schema->validate(parse("1.0")).empty());
  EXPECT_TRUE(schema->validate(parse("-7")).empty());
  EXPECT_FALSE(schema->validate(parse("1.5")).empty());
  EXPECT_TRUE(compile(R"({"type": "number"})")->validate(parse("3")).empty());
}

TEST_F(SchemaTest, HugeUnsignedNumbersAreCompared) {
  auto schema = compile(R"({"type": "integer", "minimum": 0, "maximum": 100})");
  ASSERT_NE(schema, nullptr);
  const auto violations = schema->validate(parse("18446744073709551615"));
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].constraint, "maximum");
  EXPECT_TRUE(compile(R"({"enum": [18446744073709551615]})")
                  ->validate(parse("18446744073709551615"))
                  .empty());
}

struct KeywordCase {
  const char* schema;
  const char* instance;
  const char* field;
  const char* constraint;
};

TEST_F(SchemaTest, EachKeywordReportsItsNameAndField) {
  const KeywordCase cases[] = {
      {R"({"properties": {"s": {"enum": ["open", "done"]}}})", R"({"s": "gone"})", "s", "enum"},
      {R"({"const": 3})", "4", "", "const"},
      {R"({"properties": {"n": {"minimum": 1}}})", R"({"n": 0})", "n", "minimum"},
      {R"({"maximum": 1})", "2", "", "maximum"},
      {R"({"exclusiveMinimum": 1})", "1", "", "exclusiveMinimum"},
      {R"({"exclusiveMaximum": 1})", "1", "", "exclusiveMaximum"},
      {R"({"multipleOf": 3})", "7", "", "multipleOf"},
      {R"({"minLength": 2})", R"("a")", "", "minLength"},
      {R"({"maxLength": 2})", R"("abc")", "", "maxLength"},
      {R"({"properties": {"c": {"pattern": "^[a-z]+$"}}})", R"({"c": "A1"})", "c", "pattern"},
      {R"({"format": "date"})", R"("2023-02-29")", "", "format"},
      {R"({"minItems": 1})", "[]", "", "minItems"},
      {R"({"maxItems": 1})", "[1, 2]", "", "maxItems"},
      {R"({"uniqueItems": true})", "[1, 2, 1]", "", "uniqueItems"},
      {R"({"minProperties": 1})", "{}", "", "minProperties"},
      {R"({"maxProperties": 1})", R"({"a": 1, "b": 2})", "", "maxProperties"},
      {R"({"properties": {"a": {}}, "additionalProperties": false})", R"({"a": 1, "extra": 2})",
       "extra", "additionalProperties"},
      {R"({"additionalProperties": {"type": "string"}})", R"({"x": 1})", "x", "type"},
      {R"({"items": [{"type": "string"}], "additionalItems": false})", R"(["a", 1])", "",
       "additionalItems"},
      {R"({"contains": {"type": "string"}})", "[1, 2]", "", "contains"},
      {R"({"dependencies": {"card": ["billing"]}})", R"({"card": 1})", "billing", "dependencies"},
      {R"({"anyOf": [{"type": "string"}, {"type": "integer"}]})", "true", "", "anyOf"},
      {R"({"oneOf": [{"minimum": 0}, {"maximum": 10}]})", "5", "", "oneOf"},
      {R"({"allOf": [true, false]})", "1", "", "allOf"},
      {R"({"not": {"type": "string"}})", R"("s")", "", "not"},
      {R"({"if": {"type": "string"}, "then": false})", R"("s")", "", "if"},
  };
  for (const KeywordCase& c : cases) {
    auto schema = compile(c.schema);
    ASSERT_NE(schema, nullptr) << c.schema;
    const auto violations = schema->validate(parse(c.instance));
    ASSERT_FALSE(violations.empty()) << c.schema << " accepted " << c.instance;
    bool found = false;
    for (const Violation& v : violations) {
      found = found || (v.field == c.field && v.constraint == c.constraint && !v.message.empty());
    }
    EXPECT_TRUE(found) << c.schema << " vs " << c.instance << ": wanted {" << c.field << " | "
                       << c.constraint << "}, got " << describe(violations);
  }
}

TEST_F(SchemaTest, MessagesAreReadable) {
  EXPECT_EQ(only_violation(R"({"minimum": 1.5})", "1").message,
            "must be greater than or equal to 1.5");
  EXPECT_EQ(only_violation(R"({"exclusiveMaximum": 10})", "10").message, "must be less than 10");
  EXPECT_EQ(only_violation(R"({"pattern": "^a"})", R"("b")").message,
            "must match the pattern '^a'");
  EXPECT_EQ(only_violation(R"({"additionalProperties": false})", R"({"x": 1})").message,
            "'x' is not an allowed property");
  EXPECT_EQ(only_violation(R"({"maxItems": 2})", "[1, 2, 3]").message, "must have at most 2 items");
}

TEST_F(SchemaTest, NestedPathsUseDotsAndIndexes) {
  const Violation v = only_violation(
      R"({"properties": {"items": {"type": "array",
                                   "items": {"properties": {"id": {"type": "string"}}}}}})",
      R"({"items": [{"id": "a"}, {"id": "b"}, {"id": 3}]})");
  EXPECT_EQ(v.field, "items[2].id");
  EXPECT_EQ(v.constraint, "type");

  // A member named like an index is still a member.
  const Violation named =
      only_violation(R"({"properties": {"0": {"type": "string"}}})", R"({"0": 1})");
  EXPECT_EQ(named.field, "0");
}

TEST_F(SchemaTest, StructuralParentsAreNotReportedNextToTheCause) {
  auto schema = compile(R"({
    "type": "object",
    "properties": {
      "list": {"type": "array", "items": {"type": "object", "required": ["id"],
                                          "properties": {"id": {"type": "integer"}}}},
      "meta": {"allOf": [{"properties": {"n": {"maximum": 3}}}]}
    }
  })");
  ASSERT_NE(schema, nullptr);
  const auto violations =
      schema->validate(parse(R"({"list": [{"id": 1}, {}, {"id": "x"}], "meta": {"n": 4}})"));
  ASSERT_EQ(violations.size(), 3u) << describe(violations);
  EXPECT_EQ(violations[0].field, "list[1].id");
  EXPECT_EQ(violations[0].constraint, "required");
  EXPECT_EQ(violations[1].field, "list[2].id");
  EXPECT_EQ(violations[1].constraint, "type");
  EXPECT_EQ(violations[2].field, "meta.n");
  EXPECT_EQ(violations[2].constraint, "maximum");
}

TEST_F(SchemaTest, ValidationIsDeterministic) {
  auto schema = compile(R"({"required": ["a", "b"], "properties": {"c": {"type": "string"},
                            "d": {"minimum": 0}}, "additionalProperties": false})");
  ASSERT_NE(schema, nullptr);
  const json::value instance = parse(R"({"c": 1, "d": -1, "e": 0})");
  const std::string first = describe(schema->validate(instance));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(describe(schema->validate(instance)), first);
}

TEST_F(SchemaTest, FormatsOnlyConstrainStrings) {
  auto date = compile(R"({"format": "date"})");
  ASSERT_NE(date, nullptr);
  for (const char* instance : {"5", R"({"a": 1})", "[1, 2]", "null", R"("2024-02-29")"}) {
    EXPECT_TRUE(date->validate(parse(instance)).empty()) << instance;
  }
  EXPECT_FALSE(date->validate(parse(R"("2023-02-29")")).empty());
  EXPECT_FALSE(date->validate(parse(R"("2024-13-01")")).empty());

  auto date_time = compile(R"({"format": "date-time"})");
  ASSERT_NE(date_time, nullptr);
  EXPECT_TRUE(date_time->validate(parse(R"("2024-05-01T10:20:30.5+02:00")")).empty());
  EXPECT_TRUE(date_time->validate(parse(R"("2024-05-01t10:20:30z")")).empty());
  EXPECT_FALSE(date_time->validate(parse(R"("2024-05-01 10:20:30Z")")).empty());
  EXPECT_FALSE(date_time->validate(parse(R"("2024-05-01T25:00:00Z")")).empty());

  // Formats hearth does not check are annotations.
  EXPECT_TRUE(compile(R"({"format": "email"})")->validate(parse(R"("not an email")")).empty());
}

TEST(ViolationMapping, UnknownDescriptionsAreKept) {
  const auto violations = detail::to_violations(
      {{{"<root>", "[a]"}, "Some future valijson message."}}, parse(R"({"a": 1})"));
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field, "a");
  EXPECT_EQ(violations[0].constraint, "schema");
  EXPECT_EQ(violations[0].message, "Some future valijson message.");
}

TEST(ViolationMapping, TrimsPrintedNumbers) {
  EXPECT_EQ(detail::trim_number("5.000000"), "5");
  EXPECT_EQ(detail::trim_number("0.250000"), "0.25");
  EXPECT_EQ(detail::trim_number("-12"), "-12");
  EXPECT_EQ(detail::trim_number("100"), "100");
}

// --- defaults -----------------------------------------------------------------------------------

TEST_F(SchemaTest, DefaultsFillAbsentPropertiesRecursively) {
  auto schema = compile(R"({
    "type": "object",
    "properties": {
      "limit": {"type": "integer", "default": 20},
      "filter": {
        "type": "object",
        "properties": {"status": {"default": "open"}, "tags": {"default": []}}
      },
      "items": {"type": "array", "items": {"properties": {"done": {"default": false}}}},
      "absent": {"type": "object", "properties": {"x": {"default": 1}}}
    }
  })");
  ASSERT_NE(schema, nullptr);
  json::value instance = parse(R"({"filter": {"tags": ["a"]}, "items": [{}, {"done": true}]})");
  schema->apply_defaults(instance);
  EXPECT_EQ(json::canonical(instance),
            json::canonical(parse(R"({"filter": {"tags": ["a"], "status": "open"},
                                      "items": [{"done": false}, {"done": true}],
                                      "limit": 20})")));
}

TEST_F(SchemaTest, DefaultsFollowRefsAndAllOf) {
  constexpr std::string_view kTypes = R"({
    "Paging": {"properties": {"page": {"default": 1}, "size": {"$ref": "#/types/Size"}}},
    "Size": {"type": "integer", "default": 50}
  })";
  auto schema = compile(R"({
    "allOf": [{"$ref": "#/types/Paging"}, {"properties": {"sort": {"default": "asc"}}}],
    "properties": {"nested": {"$ref": "#/types/Paging"}}
  })",
                        kTypes);
  ASSERT_NE(schema, nullptr);
  json::value instance = parse(R"({"nested": {"size": 10}})");
  schema->apply_defaults(instance);
  EXPECT_EQ(json::canonical(instance),
            json::canonical(parse(R"({"nested": {"size": 10, "page": 1}, "page": 1, "size": 50,
                                      "sort": "asc"})")));
}

TEST_F(SchemaTest, DefaultsNeverOverwriteAndAreCopies) {
  auto schema = compile(R"({"properties": {"opts": {"default": {"deep": [1]}},
                                           "n": {"default": 5}, "z": {"default": null}}})");
  ASSERT_NE(schema, nullptr);
  json::value present = parse(R"({"n": null, "z": 0})");
  schema->apply_defaults(present);
  EXPECT_EQ(json::canonical(present),
            json::canonical(parse(R"({"n": null, "z": 0, "opts": {"deep": [1]}})")));

  // Changing an inserted default must not change the schema's.
  present.as_object()["opts"].as_object()["deep"].as_array().push_back(2);
  json::value fresh = json::object();
  schema->apply_defaults(fresh);
  EXPECT_EQ(json::canonical(fresh), json::canonical(parse(R"({"opts": {"deep": [1]}, "n": 5,
                                                              "z": null})")));

  // Nothing is created where the instance is not an object.
  json::value scalar = 3;
  schema->apply_defaults(scalar);
  EXPECT_EQ(scalar, json::value(3));
}

TEST_F(SchemaTest, DefaultsFollowRecursiveTypes) {
  auto schema = compile(R"({"$ref": "#/types/Node"})", R"({
    "Node": {"properties": {"label": {"default": "?"}, "next": {"$ref": "#/types/Node"}}}
  })");
  ASSERT_NE(schema, nullptr);
  json::value instance = parse(R"({"next": {"next": {"label": "c"}}})");
  schema->apply_defaults(instance);
  EXPECT_EQ(
      json::canonical(instance),
      json::canonical(parse(R"({"label": "?", "next": {"label": "?", "next": {"label": "c"}}})")));
}

// --- threads ------------------------------------------------------------------------------------

TEST_F(SchemaTest, ConcurrentValidationOfOneSchema) {
  auto schema = compile(R"({
    "type": "object",
    "required": ["id", "name"],
    "properties": {
      "id": {"type": "integer", "minimum": 1},
      "name": {"type": "string", "pattern": "^[a-z]+$"},
      "tags": {"type": "array", "items": {"$ref": "#/types/Tag"}},
      "when": {"type": "string", "format": "date"}
    },
    "patternProperties": {"^x-": {"type": "string"}}
  })",
                        R"({"Tag": {"type": "string", "pattern": "^#", "maxLength": 8}})");
  ASSERT_NE(schema, nullptr);
  const json::value good =
      parse(R"({"id": 3, "name": "abc", "tags": ["#a"], "when": "2024-01-01", "x-a": "s"})");
  const json::value bad =
      parse(R"({"id": 0, "name": "A", "tags": ["a", "#too-long-tag"], "x-b": 1})");
  const std::string expected_bad = describe(schema->validate(bad));
  ASSERT_FALSE(expected_bad.empty());

  constexpr int kThreads = 6;
  constexpr int kIterations = 100;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIterations; ++i) {
        if (!schema->validate(good).empty()) ++mismatches;
        if (describe(schema->validate(bad)) != expected_bad) ++mismatches;
        json::value copy = good;
        schema->apply_defaults(copy);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace hearth::schema

namespace hearth::schema {
namespace {

// A long string against a pattern must neither crash the daemon nor be accepted unchecked.
TEST(SchemaPattern, LongStringsAreCheckedWithoutCrashing) {
  auto compiler = make_draft7_compiler();
  Problems problems;
  auto schema = compiler->compile(json::parse(R"({"type": "string", "pattern": "^(a|b)*$"})"),
                                  json::object{}, problems);
  ASSERT_TRUE(schema) << (problems.empty() ? "" : problems[0].to_string());
  EXPECT_TRUE(schema->validate(json::value(std::string(200000, 'a'))).empty());
  auto bad = std::string(200000, 'a') + "c";
  auto v = schema->validate(json::value(bad));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].constraint, "pattern");
  // RE2 is linear in the input: there is no length past which strings are refused unchecked.
  EXPECT_TRUE(schema->validate(json::value(std::string(std::size_t{300} * 1024, 'a'))).empty());
}

}  // namespace
}  // namespace hearth::schema
