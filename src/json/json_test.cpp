#include "json/json.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

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
  EXPECT_EQ(text_of(value(42.5)), "42.5");
  EXPECT_EQ(text_of(value(1e-7)), "1e-7");
  EXPECT_EQ(text_of(value(true)), "true");
  EXPECT_EQ(text_of(parse_text(R"({"x":[1,"y"]})").value()), R"({"x":[1,"y"]})");
  EXPECT_EQ(text_of(value(nullptr)), std::nullopt);
}

TEST(JsonCanonical, NumbersStringsAndKeysHaveOneForm) {
  auto v = parse_text(R"({"b":[1.0,2.5,-0.0,1e21],"a":"\u00e9\n\u0001/"})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(canonical(*v), R"({"a":"é\n\u0001/","b":[1,2.5,0,1e+21]})");
  // Its own number form, unchanged by json::serialize's (A2S checksums are made from it).
  EXPECT_EQ(canonical(array{1e-7, 1e-6, 1e16, 9007199254740992.0, 42.5, 0.1 + 0.2}),
            "[1e-07,1e-06,1e+16,9007199254740992,42.5,0.30000000000000004]");
}

}  // namespace
}  // namespace hearth::json

namespace hearth::json {
namespace {

// Boost.JSON 1.81 wrote these as 4.25E1, 3.0000000000000004E-1, 1E21, 1E2, ...
TEST(JsonSerialize, DoublesAreTheShortestTextThatReadsBackAsJavaScriptWritesThem) {
  const std::pair<double, const char*> cases[] = {
      {42.5, "42.5"},
      {0.1 + 0.2, "0.30000000000000004"},
      {0.1, "0.1"},
      {-0.5, "-0.5"},
      {100.0, "100"},
      {1.0, "1"},
      {-3.0, "-3"},
      {0.0, "0"},
      {-0.0, "0"},
      {1e21, "1e+21"},
      {1e20, "1e+20"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {-1.7976931348623157e308, "-1.7976931348623157e+308"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {1e-7, "1e-7"},
      {1.5e-7, "1.5e-7"},
      {1e-6, "0.000001"},
      {1.25e-6, "0.00000125"},
      {123.456, "123.456"},
      {-122.3, "-122.3"},
      {1e16, "1e+16"},
      {9007199254740991.0, "9007199254740991"},
      {9007199254740992.0, "9.007199254740992e+15"},
      {-9007199254740992.0 * 2, "-1.8014398509481984e+16"},
      {1.2345678901234567e19, "1.2345678901234567e+19"},
      {-9.2e18, "-9.2e+18"},
      {-9223372036854775808.0, "-9.223372036854776e+18"},
      {18446744073709551616.0, "1.8446744073709552e+19"},
      {4503599627370495.5, "4503599627370495.5"},
      {3.14159, "3.14159"},
      {1.0 / 3, "0.3333333333333333"},
  };
  for (const auto& [d, text] : cases) {
    EXPECT_EQ(json::serialize(value(d)), text) << d;
  }
}

TEST(JsonSerialize, NonFiniteDoublesAreNull) {
  EXPECT_EQ(json::serialize(value(std::numeric_limits<double>::quiet_NaN())), "null");
  EXPECT_EQ(json::serialize(value(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(json::serialize(array{-std::numeric_limits<double>::infinity(), 1.5}), "[null,1.5]");
}

TEST(JsonSerialize, IntegersAsBefore) {
  const value values[] = {value(0),
                          value(-1),
                          value(std::numeric_limits<std::int64_t>::min()),
                          value(std::numeric_limits<std::int64_t>::max()),
                          value(std::numeric_limits<std::uint64_t>::max()),
                          value(std::uint64_t{42})};
  for (const auto& v : values) EXPECT_EQ(json::serialize(v), boost::json::serialize(v));
  EXPECT_EQ(json::serialize(value(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(json::serialize(value(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
}

/// The double `text` reads back as, bit for bit, or nullopt when parse_text refuses it. What it
/// reads has the canonical form of `d` (the evidence log hashes records read back from text).
std::optional<std::uint64_t> read_back(const std::string& text, double d) {
  auto r = parse_text(text);
  if (!r.ok() || !r->is_number()) return std::nullopt;
  EXPECT_EQ(canonical(*r), canonical(value(d))) << text;
  return std::bit_cast<std::uint64_t>(r->to_number<double>());
}

TEST(JsonSerialize, EveryFiniteDoubleReadsBackBitForBitWithItsCanonicalForm) {
  std::mt19937_64 random(20240611);
  std::vector<double> values;
  for (int i = 0; i < 200000; ++i) {
    // Every bit pattern (every exponent), and numbers as people write them.
    values.push_back(std::bit_cast<double>(random()));
    values.push_back(static_cast<double>(static_cast<std::int64_t>(random() % 2000001) - 1000000) /
                     std::pow(10.0, static_cast<double>(random() % 12)));
    values.push_back(
        std::ldexp(static_cast<double>(random() >> 11), static_cast<int>(random() % 140) - 70));
  }
  for (const double edge :
       {9223372036854775808.0, 18446744073709551616.0, 9007199254740992.0, 1e21}) {
    for (double d = edge, i = 0; i < 4; ++i) {
      values.push_back(d);
      values.push_back(-d);
      d = std::nextafter(d, 0.0);
    }
    values.push_back(std::nextafter(edge, 2 * edge));
  }
  values.push_back(std::numeric_limits<double>::denorm_min());
  values.push_back(std::numeric_limits<double>::max());
  values.push_back(std::numeric_limits<double>::min());
  std::size_t checked = 0;
  for (const double d : values) {
    if (!std::isfinite(d) || (d == 0 && std::signbit(d))) continue;
    const std::string text = json::serialize(value(d));
    const auto back = read_back(text, d);
    ASSERT_TRUE(back.has_value()) << text;
    ASSERT_EQ(*back, std::bit_cast<std::uint64_t>(d)) << text;
    ++checked;
  }
  EXPECT_GT(checked, 400000u);
}

/// ECMA-262 Number::toString from std::to_chars's shortest scientific digits, written plainly:
/// what the writer's faster paths must agree with (below 2^53).
std::string javascript_number(double d) {
  if (d == 0) return "0";
  char sci[40];
  const auto end =
      std::to_chars(sci, sci + sizeof sci, std::fabs(d), std::chars_format::scientific);
  const std::string_view text(sci, static_cast<std::size_t>(end.ptr - sci));
  const auto e = text.find('e');
  std::string digits;
  for (const char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  const int n = std::stoi(std::string(text.substr(e + 1))) + 1;
  const int k = static_cast<int>(digits.size());
  std::string out = d < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits + std::string(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n)) + "." +
           digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  } else {
    out += digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" +
           (n - 1 < 0 ? "-" : "+") + std::to_string(std::abs(n - 1));
  }
  return out;
}

TEST(JsonSerialize, DoublesBelow2To53AreWhatJavaScriptWrites) {
  std::mt19937_64 random(11);
  for (int i = 0; i < 300000; ++i) {
    // Few decimals and full precision, over the magnitudes where the writer takes shortcuts.
    const double scale = std::pow(10.0, static_cast<double>(random() % 24) - 8);
    const double few =
        static_cast<double>(static_cast<std::int64_t>(random() % 2000001) - 1000000) /
        std::pow(10.0, static_cast<double>(random() % 7));
    const double full = std::ldexp(static_cast<double>(random() >> 11), -53) * scale;
    for (const double d : {few, full, -full, few * 1e-3, std::nextafter(1e-3, 0.0), 1e-3}) {
      if (std::fabs(d) >= 9007199254740992.0) continue;
      ASSERT_EQ(json::serialize(value(d)), javascript_number(d)) << d;
    }
  }
}

TEST(JsonSerialize, StringsAreEscapedAsBoostJsonEscapesThem) {
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));
  EXPECT_EQ(json::serialize(value(every_byte)), boost::json::serialize(value(every_byte)));
  EXPECT_EQ(json::serialize(value("\x01\x1f\x7f\"\\/\b\f\n\r\t é 中 😀")),
            "\"\\u0001\\u001f\x7f\\\"\\\\/\\b\\f\\n\\r\\t é 中 😀\"");
  // Each character that is escaped, at every place of an 8-byte block, in short and long runs.
  std::mt19937_64 random(7);
  for (int c = 0; c < 256; ++c) {
    for (std::size_t at = 0; at < 24; ++at) {
      std::string s(24 + random() % 20, 'a');
      for (auto& ch : s) ch = static_cast<char>(0x20 + random() % 0x60);
      s[at] = static_cast<char>(c);
      ASSERT_EQ(json::serialize(value(s)), boost::json::serialize(value(s))) << c << " at " << at;
      object o;
      o[s] = s;
      ASSERT_EQ(json::serialize(o), boost::json::serialize(o)) << c << " at " << at;
    }
  }
  // Invalid UTF-8 goes through as it is, as before.
  const std::string invalid = "\xff\xfe\xc3";
  EXPECT_EQ(json::serialize(value(invalid)), boost::json::serialize(value(invalid)));
}

TEST(JsonSerialize, DocumentsWithoutDoublesAreWrittenAsBefore) {
  auto doc = parse_text(
      R"({"a":[1,-2,18446744073709551615,true,false,null,"x\ny",{},[]],"b":{"c\u0000":"\u00e9"},)"
      R"("":[[[]]],"d":-9223372036854775808})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(json::serialize(*doc), boost::json::serialize(*doc));
  EXPECT_EQ(json::serialize(doc->get_object()), boost::json::serialize(*doc));
  EXPECT_EQ(json::serialize(doc->at("a").get_array()), boost::json::serialize(doc->at("a")));
  EXPECT_EQ(json::serialize(string("q\"")), R"("q\"")");
  EXPECT_EQ(json::serialize(string_view("q\"")), R"("q\"")");
  EXPECT_EQ(dump(*doc), json::serialize(*doc));
  std::string out = "x";
  serialize_to(out, *doc);
  EXPECT_EQ(out, "x" + json::serialize(*doc));
}

TEST(JsonSerialize, NestedDoublesUseTheShortForm) {
  auto doc = parse_text(R"({"budget":42.5,"sum":[0.30000000000000004,1e21,1.0E2]})");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(json::serialize(*doc), R"({"budget":42.5,"sum":[0.30000000000000004,1e+21,100]})");
}

}  // namespace
}  // namespace hearth::json
