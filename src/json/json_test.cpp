#include "json/json.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cstdint>

#include "json/text.hpp"

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

TEST(JsonParse, RefusesNumbersNoDoubleOrIntegerHolds) {
  // These used to come back as Infinity (not JSON) or silently changed.
  for (const char* text :
       {"1e400", "[-1e400]", "{\"a\":123456789012345678901234567890}", "-99999999999999999999"}) {
    auto r = parse_text(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kParseError);
    EXPECT_NE(r.error().message.find("beyond"), std::string::npos) << r.error().message;
  }
  // The edges of what is held exactly are still accepted.
  for (const char* text : {"18446744073709551615", "-9223372036854775808", "1.7976931348623157e308",
                           "1e-400", "0.1"}) {
    EXPECT_TRUE(parse_text(text).ok()) << text;
  }
}

TEST(JsonParse, ReadsDoublesCorrectlyRounded) {
  // Boost.JSON 1.81 alone reads these one unit in the last place off.
  for (const double d :
       {934.5146729745181, 203.37631919293878, 1.3927926388013963e-143, 5.409760742964738e+124}) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, d).ptr;
    auto r = parse_text(std::string_view(text, static_cast<std::size_t>(end - text)));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(std::bit_cast<std::uint64_t>(r->get_double()), std::bit_cast<std::uint64_t>(d))
        << text;
    std::vector<RawNumber> raw;
    auto m = parse_message(R"({"params":[)" + std::string(text, end) + "]}", {}, raw);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->at("params").at(0).get_double(), d) << text;
  }
}

TEST(JsonParseMessage, ListsIdTextsAndOutOfRangeNumbersWithTheirPlace) {
  std::vector<RawNumber> raw;
  auto r = parse_message(
      R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m","params":{"x":[1e400]}})",
      {}, raw);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(raw[0].member, "id");
  EXPECT_TRUE(raw[0].direct);
  EXPECT_EQ(raw[0].text, "123456789012345678901234567890");
  EXPECT_EQ(raw[0].element, RawNumber::kNoElement);
  EXPECT_EQ(raw[1].member, "params");
  EXPECT_FALSE(raw[1].direct);
  EXPECT_TRUE(raw[1].out_of_range);
  EXPECT_EQ(raw[1].text, "1e400");
}

TEST(JsonParseMessage, PlacesNumbersInTheirBatchElement) {
  std::vector<RawNumber> raw;
  auto r = parse_message(
      R"([{"id":1,"params":{"id":1.5}},{"id":2.50,"x":{}},{"id":"s","params":[9e999]},[1e999]])",
      {}, raw);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(raw.size(), 3u);
  // The nested "id" inside params is not an id; integers are not listed.
  EXPECT_EQ(raw[0].element, 1u);
  EXPECT_EQ(raw[0].text, "2.50");
  EXPECT_TRUE(raw[0].direct);
  EXPECT_FALSE(raw[0].out_of_range);
  EXPECT_EQ(raw[1].element, 2u);
  EXPECT_EQ(raw[1].member, "params");
  EXPECT_TRUE(raw[1].out_of_range);
  EXPECT_EQ(raw[2].element, 3u);
  EXPECT_TRUE(raw[2].member.empty());
  EXPECT_TRUE(raw[2].out_of_range);
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

TEST(JsonCanonical, NumbersStringsAndKeysHaveOneForm) {
  auto v = parse_text(R"({"b":[1.0,2.5,-0.0,1e21],"a":"\u00e9\n\u0001/"})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(canonical(*v), R"({"a":"é\n\u0001/","b":[1,2.5,0,1e+21]})");
}

}  // namespace
}  // namespace hearth::json
