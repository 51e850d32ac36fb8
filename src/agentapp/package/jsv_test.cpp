#include "agentapp/package/jsv.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hearth::agentapp::jsv {
namespace {

TEST(JsNumber, FormatsAsNumberToString) {
  EXPECT_EQ(number_to_string(1), "1");
  EXPECT_EQ(number_to_string(-0.0), "0");
  EXPECT_EQ(number_to_string(0.1), "0.1");
  EXPECT_EQ(number_to_string(1.5), "1.5");
  EXPECT_EQ(number_to_string(-42), "-42");
  EXPECT_EQ(number_to_string(1e20), "100000000000000000000");
  EXPECT_EQ(number_to_string(1e21), "1e+21");
  EXPECT_EQ(number_to_string(12345678901234567890.0), "12345678901234567000");
  EXPECT_EQ(number_to_string(0.000001), "0.000001");
  EXPECT_EQ(number_to_string(1.5e-7), "1.5e-7");
  EXPECT_EQ(number_to_string(5e-324), "5e-324");
  EXPECT_EQ(number_to_string(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(number_to_string(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(number_to_string(std::nan("")), "NaN");
}

TEST(JsStringify, PutsArrayIndexKeysFirstInAscendingOrder) {
  json::object o;
  o["b"] = 1;
  o["10"] = 2;
  o["2"] = 3;
  o["01"] = 4;
  o["4294967295"] = 5;  // not an array index
  EXPECT_EQ(stringify(o), R"({"2":3,"10":2,"b":1,"01":4,"4294967295":5})");
}

TEST(JsStringify, IndentsLikeJsonStringifyWithTwoSpaces) {
  const json::value v = json::parse(R"({"a":[1,{"b":[]}],"c":{},"d":null})");
  EXPECT_EQ(stringify(v, 2),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": "
            "null\n}");
}

TEST(JsStringify, EscapesOnlyQuotesBackslashesAndControlCharacters) {
  const json::value v = json::string("q\" b\\ \x01 \b\f\n\r\t \x7f \xC3\xA9 \xE2\x80\xA8 /");
  EXPECT_EQ(stringify(v), "\"q\\\" b\\\\ \\u0001 \\b\\f\\n\\r\\t \x7f \xC3\xA9 \xE2\x80\xA8 /\"");
}

TEST(JsStringify, WritesNonFiniteNumbersAsNull) {
  EXPECT_EQ(stringify(json::array{std::numeric_limits<double>::infinity(), 2.0}), "[null,2]");
}

TEST(JsString, ConvertsLikeStringOfAValue) {
  const json::value arr = json::parse(R"(["a",null,["b",1.5],{"x":1},true])");
  EXPECT_EQ(to_string(&arr), "a,,b,1.5,[object Object],true");
  EXPECT_EQ(to_string(nullptr), "undefined");
  const json::value n = nullptr;
  EXPECT_EQ(to_string(&n), "null");
}

TEST(JsTruthy, FollowsJavaScript) {
  for (const char* falsy : {"null", "false", "0", "-0", "\"\""}) {
    const json::value v = json::parse(falsy);
    EXPECT_FALSE(truthy(v)) << falsy;
  }
  for (const char* truthy_text : {"true", "1", "\"0\"", "[]", "{}", "\"false\""}) {
    const json::value v = json::parse(truthy_text);
    EXPECT_TRUE(truthy(v)) << truthy_text;
  }
  EXPECT_FALSE(truthy(nullptr));
}

TEST(JsGet, ReadingAMemberOfNullOrUndefinedThrows) {
  const json::value null = nullptr;
  try {
    get(&null, "key");
    FAIL() << "no throw";
  } catch (const Thrown& e) {
    EXPECT_STREQ(e.what(), "Cannot read properties of null (reading 'key')");
  }
  EXPECT_THROW(get(nullptr, "x"), Thrown);
  EXPECT_EQ(get_opt(&null, "key"), nullptr);
  const json::value s = "text";
  EXPECT_EQ(get(&s, "key"), nullptr);
}

TEST(JsUtf8, DecodesLikeTheWhatwgDecoder) {
  // A cut three-byte sequence is one U+FFFD; the byte that cut it is read again.
  EXPECT_EQ(decode_utf8("\xE2\x82"
                        "A"),
            "\xEF\xBF\xBD"
            "A");
  EXPECT_EQ(decode_utf8("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(decode_utf8("\xF0\x9F\x98"), "\xEF\xBF\xBD");
  EXPECT_EQ(decode_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(decode_utf8("ok \xC3\xA9"), "ok \xC3\xA9");
}

TEST(JsTrim, RemovesJavaScriptWhiteSpace) {
  EXPECT_EQ(trim("\xC2\xA0\t x y \r\xE3\x80\x80\xEF\xBB\xBF"), "x y");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim("\xC3\xA9"), "\xC3\xA9");
}

TEST(JsSort, OrdersByUtf16CodeUnits) {
  // U+FF21 is after U+1F600 in UTF-8 byte order but before it in UTF-16 (surrogates D83D...).
  EXPECT_TRUE(utf16_less("\xF0\x9F\x98\x80", "\xEF\xBC\xA1"));
  EXPECT_FALSE(utf16_less("\xEF\xBC\xA1", "\xF0\x9F\x98\x80"));
  EXPECT_TRUE(utf16_less("Z", "a"));
  EXPECT_TRUE(utf16_less(".hidden", "APP.md"));
}

TEST(JsSpread, SplitsAStringIntoUtf16CodeUnits) {
  const auto units = utf16_units("a\xF0\x9F\x98\x80");
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(stringify(json::value(json::array(units.begin(), units.end()))),
            R"(["a","\ud83d","\ude00"])");
}

}  // namespace
}  // namespace hearth::agentapp::jsv
