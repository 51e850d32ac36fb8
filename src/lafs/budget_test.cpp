#include "lafs/budget.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "lafs/envelope.hpp"
#include "lafs/testing.hpp"
#include "lafs/validate.hpp"

namespace hearth::lafs {
namespace {

using testing::parse;

TEST(LafsBudget, EstimateFollowsTheSpecAlgorithm) {
  EXPECT_DOUBLE_EQ(estimate_tokens(nullptr), 1);
  EXPECT_DOUBLE_EQ(estimate_tokens(true), 1);
  EXPECT_DOUBLE_EQ(estimate_tokens(7), 1);                // max(1, 1/4)
  EXPECT_DOUBLE_EQ(estimate_tokens(123456789), 9.0 / 4);  // 9 digits
  EXPECT_DOUBLE_EQ(estimate_tokens(1.5), 1);              // max(1, 3/4)
  EXPECT_DOUBLE_EQ(estimate_tokens(1e21), 5.0 / 4);       // "1e+21" as JavaScript writes it
  EXPECT_DOUBLE_EQ(estimate_tokens("abcdefgh"), 2);
  EXPECT_DOUBLE_EQ(estimate_tokens("e\xCC\x81"
                                   "e\xCC\x81"
                                   "e\xCC\x81"
                                   "e\xCC\x81"
                                   "e\xCC\x81"),
                   5.0 / 4);  // graphemes
  EXPECT_DOUBLE_EQ(estimate_tokens(json::array{}), 2);
  EXPECT_DOUBLE_EQ(estimate_tokens(json::array{1, 2}), 2 + (1 + 1) + (1 + 1));
  // {"id": "abcd"}: 2 + key(1) + 2 + value(1)
  EXPECT_DOUBLE_EQ(estimate_tokens(parse(R"({"id":"abcd"})")), 6);
}

TEST(LafsBudget, DepthPastTwentyIsInfinite) {
  json::value v = 1;
  for (int i = 0; i < 20; ++i) v = json::array{v};
  EXPECT_TRUE(std::isfinite(estimate_tokens(v)));
  v = json::array{v};
  EXPECT_TRUE(std::isinf(estimate_tokens(v)));
}

TEST(LafsBudget, ParseBudget) {
  auto b = parse_budget(parse(R"({"maxTokens":4000,"maxBytes":32768,"maxItems":100})"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->max_tokens, 4000u);
  EXPECT_EQ(b->max_items, 100u);
  for (auto bad :
       {R"({})", R"({"maxTokens":0})", R"({"maxTokens":-3})", R"({"maxTokens":1.5})",
        R"({"maxTokens":"10"})", R"({"maxWords":10})", R"([])", R"({"maxBytes":1e15})"}) {
    auto r = parse_budget(parse(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().data.at("lafs").at("code"), "E_VALIDATION_SCHEMA") << bad;
  }
}

json::object list_envelope(int n) {
  json::array items;
  for (int i = 0; i < n; ++i) {
    items.push_back(json::object{{"id", i}, {"title", "Item number " + std::to_string(i)}});
  }
  return Builder("items.list")
      .request_id("req_1")
      .timestamp("2026-01-01T00:00:00Z")
      .success(json::object{{"items", items}})
      .value();
}

TEST(LafsBudget, WithinBudgetLeavesTheEnvelopeAlone) {
  auto env = list_envelope(3);
  const auto before = env;
  auto out = enforce_budget(env, Budget{10000, std::nullopt, std::nullopt});
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->truncated);
  EXPECT_EQ(env, before);
}

TEST(LafsBudget, TruncatesWithAWarning) {
  auto env = list_envelope(100);
  const auto full = static_cast<std::uint64_t>(std::ceil(estimate_tokens(env.at("result"))));
  auto out = enforce_budget(env, Budget{200, std::nullopt, std::nullopt});
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->truncated);
  EXPECT_EQ(out->original_tokens, full);
  EXPECT_LE(out->estimated_tokens, 200u);
  const auto& items = env.at("result").at("items").as_array();
  EXPECT_GT(items.size(), 0u);
  EXPECT_LT(items.size(), 100u);
  // The longest prefix that fits: one more item would not.
  json::value one_more = json::object{{"items", json::array(items)}};
  one_more.as_object()["items"].as_array().push_back(
      json::object{{"id", 99}, {"title", "Item number 99"}});
  EXPECT_GT(std::ceil(estimate_tokens(one_more)), 200);
  EXPECT_EQ(env.at("_meta").at("warnings").at(0).at("code"), "E_MVI_BUDGET_TRUNCATED");
  EXPECT_EQ(env.at("_extensions").at("x-lafs-token-estimate").at("estimated"),
            out->estimated_tokens);
  EXPECT_TRUE(envelope_schema_valid(env));
}

TEST(LafsBudget, MaxItemsAndMaxBytes) {
  auto env = list_envelope(50);
  auto out = enforce_budget(env, Budget{std::nullopt, std::nullopt, 5});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(env.at("result").at("items").as_array().size(), 5u);
  auto env2 = list_envelope(50);
  auto out2 = enforce_budget(env2, Budget{std::nullopt, 1500, std::nullopt});
  ASSERT_TRUE(out2.ok());
  EXPECT_LE(json::dump(env2).size(), 1500u);
  EXPECT_TRUE(envelope_schema_valid(env2));
}

TEST(LafsBudget, ExceededWhenTruncationCannotHelp) {
  auto env = list_envelope(10);
  const auto before = env;
  auto out =
      enforce_budget(env, Budget{std::nullopt, 100, std::nullopt});  // the envelope alone is larger
  ASSERT_FALSE(out.ok());
  const auto& lafs = out.error().data.at("lafs");
  EXPECT_EQ(lafs.at("code"), "E_MVI_BUDGET_EXCEEDED");
  EXPECT_EQ(lafs.at("details").at("constraint"), "maxBytes");
  EXPECT_EQ(env, before);  // unchanged

  auto env2 = list_envelope(10);
  auto no_trunc =
      enforce_budget(env2, Budget{10, std::nullopt, std::nullopt}, BudgetOptions{false});
  ASSERT_FALSE(no_trunc.ok());
  const auto& d = no_trunc.error().data.at("lafs").at("details");
  EXPECT_EQ(d.at("constraint"), "maxTokens");
  EXPECT_EQ(d.at("budget"), 10);
  EXPECT_EQ(d.at("excessTokens").as_uint64() + 10, d.at("estimatedTokens").as_uint64());
}

}  // namespace
}  // namespace hearth::lafs
