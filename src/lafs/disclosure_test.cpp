#include "lafs/disclosure.hpp"

#include <gtest/gtest.h>

#include "lafs/envelope.hpp"
#include "lafs/testing.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {
namespace {

using testing::lafs_code;
using testing::parse;

TEST(LafsDisclosure, ParseParameters) {
  auto d = parse_disclosure(parse(R"({"_fields":["id"],"_expand":["owner.team"],"_mvi":"minimal",
                                      "_budget":{"maxItems":3},"other":1})")
                                .as_object());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->fields, (std::vector<std::string>{"id"}));
  EXPECT_EQ(d->expand, (std::vector<std::string>{"owner.team"}));
  EXPECT_EQ(d->mvi, Mvi::kMinimal);
  EXPECT_EQ(d->budget->max_items, 3u);
  EXPECT_FALSE(parse_disclosure(json::object{}).value().fields.has_value());

  for (auto bad :
       {R"({"_fields":"id"})", R"({"_fields":[1]})", R"({"_fields":[""]})", R"({"_mvi":"custom"})",
        R"({"_mvi":"verbose"})", R"({"_expand":["a..b"]})", R"({"_budget":{}})"}) {
    auto r = parse_disclosure(parse(bad).as_object());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(lafs_code(r.error()), "E_VALIDATION_SCHEMA") << bad;
  }
  auto deep = parse_disclosure(parse(R"({"_expand":["a.b.c.d"]})").as_object());
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(lafs_code(deep.error()), "E_MVI_BUDGET_EXCEEDED");
}

TEST(LafsDisclosure, FieldsOnTheFixtures) {
  // field-extraction-success.json: a flat entity.
  auto flat = testing::read_json(testing::fixture("field-extraction-success.json"));
  auto out = apply_fields(flat.at("result"), {"id", "title", "nope"});
  EXPECT_EQ(out.result, parse(R"({"id":"T001","title":"Example Task"})"));
  EXPECT_EQ(out.unknown, (std::vector<std::string>{"nope"}));
  // field-extraction-array.json: each element.
  auto list = testing::read_json(testing::fixture("field-extraction-array.json"));
  auto out2 = apply_fields(list.at("result"), {"id", "status"});
  EXPECT_EQ(out2.result,
            parse(R"([{"id":"T001","status":"active"},{"id":"T002","status":"pending"}])"));
  EXPECT_TRUE(out2.unknown.empty());
  // A wrapper: applied one level down, the wrapper's keys kept.
  auto wrapped = testing::read_json(testing::fixture("valid-cursor-pagination.json"));
  auto out3 = apply_fields(wrapped.at("result"), {"id"});
  EXPECT_EQ(out3.result, parse(R"({"items":[{"id":"c1"},{"id":"c2"}]})"));
}

TEST(LafsDisclosure, ProjectedEnvelopeStaysValid) {
  auto env = testing::read_json(testing::fixture("field-extraction-success.json"));
  auto& o = env.as_object();
  o["result"] = apply_fields(o["result"], {"id"}).result;
  o["_meta"].as_object()["mvi"] = "custom";
  EXPECT_TRUE(envelope_schema_valid(env));
}

TEST(LafsDisclosure, Expand) {
  ExpansionCatalog catalog;
  catalog.add("owner", [](const json::value& parent) -> Result<json::value> {
    return json::value(json::object{{"id", parent.at("ownerId")}, {"name", "Ada"}});
  });
  catalog.add("owner.team", [](const json::value&) -> Result<json::value> {
    return json::value(json::object{{"name", "core"}});
  });
  auto result = parse(R"([{"id":1,"ownerId":"u1"},{"id":2,"ownerId":"u2"}])");
  // Children listed first still come after their parents.
  auto out = apply_expand(result, {"owner.team", "owner"}, catalog);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->at(1).at("owner").at("id"), "u2");
  EXPECT_EQ(out->at(0).at("owner").at("team").at("name"), "core");

  auto unknown = apply_expand(result, {"comments"}, catalog);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(lafs_code(unknown.error()), "E_DISCLOSURE_UNKNOWN_FIELD");
  EXPECT_EQ(unknown.error().data.at("lafs").at("details").at("available"),
            parse(R"(["owner","owner.team"])"));
  auto too_deep = apply_expand(result, {"owner.team"}, catalog, 1);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(lafs_code(too_deep.error()), "E_MVI_BUDGET_EXCEEDED");
  auto empty = apply_expand(result, {"owner"}, ExpansionCatalog{});
  EXPECT_FALSE(empty.ok());
}

TEST(LafsDisclosure, MinimalProjectionIsTheFixtureShape) {
  // valid-error-minimal.json is the minimal projection of a full error envelope.
  auto full = testing::read_json(testing::fixture("valid-error-envelope.json")).as_object();
  full["_meta"].as_object()["requestId"] = "req_minimal_01";
  full["error"].as_object()["agentAction"] = "retry_modified";
  const auto projected = project_mvi(full, Mvi::kMinimal);
  EXPECT_EQ(json::value(projected),
            testing::read_json(testing::fixture("valid-error-minimal.json")));
}

TEST(LafsDisclosure, StandardAndFullProjection) {
  auto env = testing::read_json(testing::fixture("valid-cursor-pagination.json")).as_object();
  EXPECT_EQ(project_mvi(env, Mvi::kFull), env);
  auto standard = project_mvi(env, Mvi::kStandard);
  EXPECT_TRUE(standard.contains("$schema"));
  EXPECT_TRUE(standard.contains("page"));
  EXPECT_FALSE(standard.at("_meta").as_object().contains("transport"));
  EXPECT_TRUE(standard.at("_meta").as_object().contains("operation"));
  auto minimal = project_mvi(env, Mvi::kMinimal);
  EXPECT_FALSE(minimal.contains("$schema"));
  EXPECT_EQ(minimal.at("result"), env.at("result"));
  EXPECT_EQ(minimal.at("_meta").as_object().size(), 2u);
}

TEST(LafsDisclosure, ApplyDisclosureOnABuiltEnvelope) {
  auto build = [] {
    return Builder("tasks.list")
        .request_id("req_1")
        .success(parse(R"({"items":[{"id":1,"title":"a","body":"x"},
                                                                                {"id":2,"title":"b","body":"y"}]})"))
        .value();
  };
  auto env = build();
  auto d =
      parse_disclosure(parse(R"({"_fields":["id","nope"],"_budget":{"maxItems":1}})").as_object())
          .value();
  ASSERT_TRUE(apply_disclosure(env, d).ok());
  EXPECT_EQ(env.at("result"), parse(R"({"items":[{"id":1}]})"));
  EXPECT_EQ(env.at("_meta").at("mvi"), "custom");
  const auto& warnings = env.at("_meta").at("warnings").as_array();
  ASSERT_EQ(warnings.size(), 2u);  // the unknown field, then the truncation
  EXPECT_EQ(warnings[0].at("code"), "E_DISCLOSURE_UNKNOWN_FIELD");
  EXPECT_EQ(warnings[0].at("fields"), parse(R"(["nope"])"));
  EXPECT_EQ(warnings[1].at("code"), "E_MVI_BUDGET_TRUNCATED");
  EXPECT_TRUE(envelope_schema_valid(env));

  auto level = build();
  ASSERT_TRUE(
      apply_disclosure(level, parse_disclosure(parse(R"({"_mvi":"full"})").as_object()).value())
          .ok());
  EXPECT_EQ(level.at("_meta").at("mvi"), "full");

  auto expand = build();
  auto unknown = apply_disclosure(
      expand, parse_disclosure(parse(R"({"_expand":["owner"]})").as_object()).value());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(lafs_code(unknown.error()), "E_DISCLOSURE_UNKNOWN_FIELD");

  auto failure = Builder("tasks.list")
                     .request_id("req_1")
                     .failure(ErrorInfo::from_registry(kInternalUnexpected, "x"))
                     .value();
  ASSERT_TRUE(
      apply_disclosure(
          failure,
          parse_disclosure(parse(R"({"_fields":["id"],"_mvi":"minimal"})").as_object()).value())
          .ok());
  EXPECT_EQ(failure.at("_meta").at("mvi"), "minimal");
  EXPECT_EQ(failure.at("result"), nullptr);
}

}  // namespace
}  // namespace hearth::lafs
