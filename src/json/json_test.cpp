#include "json/json.hpp"
#include "json/text.hpp"

#include <gtest/gtest.h>

namespace hearth::json {
namespace {

TEST(JsonParse, AcceptsValueWithSurroundingWhitespace) {
  auto r = parse_text("  {\"a\": [1, 2]}\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(dump(*r), R"({"a":[1,2]})");
}

TEST(JsonParse, RejectsTrailingGarbage) {
  auto r = parse_text("{} x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParseError);
}

TEST(JsonParse, RejectsTruncatedInput) {
  auto r = parse_text("{\"a\": ");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParseError);
}

TEST(JsonParse, RejectsDepthBeyondLimit) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_FALSE(parse_text(deep, ParseLimits{.max_depth = 64}).ok());
  EXPECT_TRUE(parse_text(deep, ParseLimits{.max_depth = 128}).ok());
}

TEST(JsonCanonical, SortsKeysRecursively) {
  auto a = parse_text(R"({"b":1,"a":{"d":2,"c":[{"y":1,"x":2}]}})");
  auto b = parse_text(R"({"a":{"c":[{"x":2,"y":1}],"d":2},"b":1})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(canonical(*a), canonical(*b));
  EXPECT_EQ(canonical(*a), R"({"a":{"c":[{"x":2,"y":1}],"d":2},"b":1})");
}

TEST(JsonKindName, NamesEveryKind) {
  EXPECT_EQ(kind_name(value(nullptr)), "null");
  EXPECT_EQ(kind_name(value(true)), "boolean");
  EXPECT_EQ(kind_name(value(1)), "integer");
  EXPECT_EQ(kind_name(value(1.5)), "number");
  EXPECT_EQ(kind_name(value("s")), "string");
  EXPECT_EQ(kind_name(value(array{})), "array");
  EXPECT_EQ(kind_name(value(object{})), "object");
}

}  // namespace
}  // namespace hearth::json

#include "common/random.hpp"

namespace hearth {
namespace {
TEST(RandomHex, LengthAlphabetAndUniqueness) {
  auto a = random_hex(32);
  auto b = random_hex(32);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}
}  // namespace
}  // namespace hearth

namespace hearth::json {
namespace {

TEST(JsonText, ScalarsAsTextCompositesAsJsonNullAsNothing) {
  EXPECT_EQ(text_of(value("a b")), "a b");
  EXPECT_EQ(text_of(value(3)), "3");
  EXPECT_EQ(text_of(value(1.5)), "1.5");
  EXPECT_EQ(text_of(value(true)), "true");
  EXPECT_EQ(text_of(parse_text(R"({"x":[1,"y"]})").value()), R"({"x":[1,"y"]})");
  EXPECT_EQ(text_of(value(nullptr)), std::nullopt);
}

}  // namespace
}  // namespace hearth::json
