// Patterns (ECMA-262 syntax, matched with RE2) and the keywords that could take time or stack out
// of proportion to the input: whatever the schema and the instance, validation completes (ctest's
// timeout is the bound; no timings are asserted) without crashing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schema/ecma_regex.hpp"
#include "schema/schema.hpp"
#include "schema/testing.hpp"

namespace hearth::schema {
namespace {

using testing::describe;

class PatternTest : public ::testing::Test {
 protected:
  std::shared_ptr<const Schema> compile(std::string_view schema) {
    Problems problems;
    auto compiled = compiler_->compile(json::parse(schema), {}, problems);
    EXPECT_TRUE(problems.empty()) << schema << ": " << describe(problems);
    return compiled;
  }

  /// The one problem compiling `schema` reports.
  Problem only_problem(std::string_view schema) {
    Problems problems;
    auto compiled = compiler_->compile(json::parse(schema), {}, problems);
    EXPECT_EQ(compiled, nullptr) << schema;
    EXPECT_EQ(problems.size(), 1u) << schema << ": " << describe(problems);
    return problems.empty() ? Problem{} : problems[0];
  }

  /// Whether the string `text` matches `pattern` (through a compiled schema).
  bool matches(std::string_view pattern, const std::string& text) {
    json::object schema;
    schema["pattern"] = pattern;
    Problems problems;
    auto compiled = compiler_->compile(schema, {}, problems);
    EXPECT_NE(compiled, nullptr) << pattern << ": " << describe(problems);
    if (compiled == nullptr) return false;
    const auto violations = compiled->validate(json::value(text));
    if (!violations.empty()) {
      EXPECT_EQ(violations[0].constraint, "pattern");
    }
    return violations.empty();
  }

  std::unique_ptr<Compiler> compiler_ = make_draft7_compiler();
};

// --- the attacks -------------------------------------------------------------------------------

// std::regex recursed once per character and crashed the daemon (SIGSEGV) on 2 KB.
TEST_F(PatternTest, NestedGroupsOnLongInputsDoNotCrash) {
  auto schema = compile(R"({"type": "string", "pattern": "^((a|b)+(c|(d|e)*)*)+$"})");
  ASSERT_NE(schema, nullptr);
  for (const std::size_t size : {std::size_t{2048}, std::size_t{1} << 20}) {
    std::string text;
    while (text.size() < size) text += "abcde";
    EXPECT_TRUE(schema->validate(json::value(text)).empty()) << size;
    const auto violations = schema->validate(json::value(text + "!"));
    ASSERT_EQ(violations.size(), 1u) << size;
    EXPECT_EQ(violations[0].constraint, "pattern");
  }
}

// Catastrophic backtracking: 104 s on 32 characters with std::regex.
TEST_F(PatternTest, ExponentialBacktrackingPatternsRunInLinearTime) {
  auto schema = compile(R"({"pattern": "^(a+)+$"})");
  ASSERT_NE(schema, nullptr);
  for (const std::size_t size : {std::size_t{32}, std::size_t{100000}}) {
    EXPECT_TRUE(schema->validate(json::value(std::string(size, 'a'))).empty());
    EXPECT_EQ(schema->validate(json::value(std::string(size, 'a') + "!")).size(), 1u);
  }
  auto nested = compile(R"({"pattern": "^(([a-z])+.)+[A-Z]([a-z])+$"})");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->validate(json::value(std::string(100000, 'a') + "!")).size(), 1u);
}

TEST_F(PatternTest, PatternPropertiesMatchWithoutBacktracking) {
  auto schema = compile(
      R"({"patternProperties": {"^(a+)+$": {"type": "integer"}}, "additionalProperties": false})");
  ASSERT_NE(schema, nullptr);
  json::object instance;
  instance[std::string(100000, 'a')] = 1;
  EXPECT_TRUE(schema->validate(instance).empty());
  instance[std::string(100000, 'a') + "!"] = 1;
  const auto violations = schema->validate(instance);
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].constraint, "additionalProperties");
  json::object wrong;
  wrong["aaa"] = "text";
  ASSERT_EQ(schema->validate(wrong).size(), 1u);
}

// Compared pairwise: 20 s for 60,000 items.
TEST_F(PatternTest, UniqueItemsOnAHundredThousandItems) {
  auto schema = compile(R"({"uniqueItems": true})");
  ASSERT_NE(schema, nullptr);
  json::array items;
  for (int i = 0; i < 100000; ++i) items.emplace_back(i);
  EXPECT_TRUE(schema->validate(items).empty());
  items.emplace_back(99999.0);  // equal to the last integer
  const auto violations = schema->validate(items);
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].constraint, "uniqueItems");
  EXPECT_NE(violations[0].message.find("99999 and #100000"), std::string::npos)
      << violations[0].message;

  json::array same(100000, json::value("x"));
  EXPECT_EQ(schema->validate(same).size(), 1u);  // one report, not one per equal pair
}

TEST_F(PatternTest, UniqueItemsUsesJsonSchemaEquality) {
  auto schema = compile(R"({"uniqueItems": true})");
  ASSERT_NE(schema, nullptr);
  const auto unique = [&](std::string_view instance) {
    return schema->validate(json::parse(instance)).empty();
  };
  EXPECT_FALSE(unique(R"([1, 1.0])"));
  EXPECT_FALSE(unique(R"([{"a": 1, "b": [2, {"c": null}]}, {"b": [2.0, {"c": null}], "a": 1}])"));
  EXPECT_FALSE(unique(R"([[1, "x"], [1, "x"]])"));
  EXPECT_TRUE(unique(R"([1, "1", true, [1], {"1": 1}, null, 1.5])"));
  EXPECT_TRUE(unique(R"([[0], [false]])"));
  EXPECT_TRUE(unique(R"([{"a": "b"}, {"ab": ""}])"));
  EXPECT_TRUE(unique(R"(["a,b", ["a", "b"]])"));
  EXPECT_TRUE(unique(R"([1, 2])"));
  EXPECT_TRUE(compile(R"({"uniqueItems": false})")->validate(json::parse("[1, 1]")).empty());
}

// Each failing item is reported; the reports are mapped to violations in linear time.
TEST_F(PatternTest, ManyViolationsAreReportedInLinearTime) {
  auto schema = compile(R"({"items": {"type": "string"}})");
  ASSERT_NE(schema, nullptr);
  json::array items;
  for (int i = 0; i < 100000; ++i) items.emplace_back(i);
  const auto violations = schema->validate(items);
  ASSERT_EQ(violations.size(), 100000u);
  EXPECT_EQ(violations[0].field, "[0]");
  EXPECT_EQ(violations[0].constraint, "type");
}

// --- refused at load ---------------------------------------------------------------------------

TEST_F(PatternTest, LookaroundAndBackreferencesAreRefusedWithTheirPath) {
  struct Case {
    std::string pattern;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"^(?=a)a",
       "lookahead (?=...) is not supported (hearth matches patterns with RE2, "
       "linear time): '^(?=a)a'"},
      {"a(?!b)", "negative lookahead (?!...) is not supported"},
      {"(?<=a)b", "lookbehind (?<=...) is not supported"},
      {"(?<!a)b", "negative lookbehind (?<!...) is not supported"},
      {"(a)\\1", "backreference \\1 is not supported"},
      {"(?<x>a)\\k<x>", "backreference \\k<name> is not supported"},
  };
  for (const Case& c : cases) {
    json::object code;
    code["pattern"] = c.pattern;
    json::object properties;
    properties["code"] = code;
    json::object schema;
    schema["properties"] = properties;
    Problems problems;
    EXPECT_EQ(compiler_->compile(schema, {}, problems), nullptr) << c.pattern;
    ASSERT_EQ(problems.size(), 1u) << c.pattern << ": " << describe(problems);
    EXPECT_EQ(problems[0].path, "properties.code.pattern");
    EXPECT_NE(problems[0].message.find(c.says), std::string::npos) << problems[0].message;
  }
  const Problem in_pattern_properties =
      only_problem(R"J({"patternProperties": {"^(?!x-)": {"type": "string"}}})J");
  EXPECT_EQ(in_pattern_properties.path, "patternProperties.^(?!x-)");
  EXPECT_NE(in_pattern_properties.message.find("negative lookahead"), std::string::npos);
  const Problem in_type = [&] {
    Problems problems;
    EXPECT_EQ(compiler_->compile(json::parse(R"({"$ref": "#/types/Code"})"),
                                 json::parse(R"J({"Code": {"pattern": "(a)\\1"}})J").as_object(),
                                 problems),
              nullptr);
    return problems.empty() ? Problem{} : problems[0];
  }();
  EXPECT_EQ(in_type.path, "types.Code.pattern");
}

TEST_F(PatternTest, InvalidAndOversizedPatternsAreRefused) {
  EXPECT_NE(only_problem(R"({"pattern": "(a"})").message.find("not a valid regular expression"),
            std::string::npos);
  EXPECT_NE(only_problem(R"({"pattern": "[b-a]"})").message.find("out of order"),
            std::string::npos);
  EXPECT_NE(only_problem(R"({"pattern": "a{2000}"})").message.find("over 1000"), std::string::npos);
  EXPECT_NE(only_problem(R"({"pattern": "(?i)a"})").message.find("inline flags"),
            std::string::npos);
  // Every repetition is small, the compiled program is not: refused, not allowed to grow.
  const Problem large = only_problem(R"J({"pattern": "((((\\w{1,1000}){1,1000}){1,1000}))"})J");
  EXPECT_NE(large.message.find("'((((\\w{1,1000}){1,1000}){1,1000}))'"), std::string::npos)
      << large.message;
}

// --- ECMA-262 semantics -------------------------------------------------------------------------

TEST_F(PatternTest, PatternsAreSearchedNotAnchored) {
  EXPECT_TRUE(matches("b", "abc"));
  EXPECT_FALSE(matches("^b", "abc"));
  EXPECT_TRUE(matches("c$", "abc"));
  EXPECT_FALSE(matches("^abc$", "abc\n"));  // $ is the end of the input, not of a line
  EXPECT_FALSE(matches("^abc$", "x\nabc"));
  EXPECT_TRUE(matches("", "anything"));
}

TEST_F(PatternTest, ClassEscapesHaveTheirEcmaMeaning) {
  EXPECT_TRUE(matches("^\\d+$", "0123456789"));
  EXPECT_FALSE(matches("^\\d$", "\xd9\xa3"));      // ARABIC-INDIC DIGIT THREE
  EXPECT_FALSE(matches("^\\d$", "\xef\xbc\x93"));  // FULLWIDTH DIGIT THREE
  EXPECT_TRUE(matches("^\\D$", "\xd9\xa3"));
  EXPECT_TRUE(matches("^\\w+$", "az_AZ09"));
  EXPECT_FALSE(matches("^\\w$", "\xc3\xa9"));  // é
  EXPECT_TRUE(matches("^\\W$", "\xc3\xa9"));
  EXPECT_TRUE(matches("^\\s$", "\xc2\xa0"));      // NO-BREAK SPACE
  EXPECT_TRUE(matches("^\\s$", "\xe2\x80\x83"));  // EM SPACE
  EXPECT_TRUE(matches("^\\s$", "\xef\xbb\xbf"));  // BOM
  EXPECT_TRUE(matches("^\\s$", "\v"));
  EXPECT_FALSE(matches("^\\S$", "\xe2\x80\x83"));
  EXPECT_TRUE(matches("^[\\d\\s]+$",
                      "1 2\xc2\xa0"
                      "3"));
  EXPECT_TRUE(matches("^[^\\d]$", "x"));
  EXPECT_FALSE(matches("^[^\\d]$", "5"));
  EXPECT_TRUE(matches("^[\\S]$", "x"));
  EXPECT_FALSE(matches("^[\\S]$", "\xe2\x80\x83"));
  EXPECT_TRUE(matches("\\bword\\b", "a word here"));
  EXPECT_FALSE(matches("\\bword\\b", "swordfish"));
}

TEST_F(PatternTest, DotAndUnicodeMatchCodePoints) {
  EXPECT_TRUE(matches("^.$", "\xc3\xa9"));          // é is one character
  EXPECT_TRUE(matches("^.$", "\xf0\x9f\x98\x80"));  // so is U+1F600
  EXPECT_FALSE(matches("^.$", "\n"));
  EXPECT_FALSE(matches("^.$", "\r"));
  EXPECT_FALSE(matches("^.$", "\xe2\x80\xa8"));  // LINE SEPARATOR
  EXPECT_TRUE(matches("^[^]$", "\n"));           // [^] is any character
  EXPECT_FALSE(matches("[]", "anything"));       // [] is none
  EXPECT_TRUE(matches("^\\u00e9$", "\xc3\xa9"));
  EXPECT_TRUE(matches("^\\u{1F600}$", "\xf0\x9f\x98\x80"));
  EXPECT_TRUE(matches("^\\ud83d\\ude00$", "\xf0\x9f\x98\x80"));  // a surrogate pair
  EXPECT_TRUE(matches("^[\\u00e0-\\u00ff]+$", "\xc3\xa9\xc3\xa0"));
  EXPECT_TRUE(matches("^\\x41$", "A"));
  EXPECT_TRUE(matches("^caf\xc3\xa9$", "caf\xc3\xa9"));
  EXPECT_TRUE(matches("^\\p{L}+$", "caf\xc3\xa9"));
  EXPECT_TRUE(matches("^\\p{Script=Greek}$", "\xce\xb1"));
  EXPECT_FALSE(matches("^\\P{L}$", "a"));
}

TEST_F(PatternTest, EcmaEscapesAndAnnexBLiterals) {
  EXPECT_TRUE(matches("^a\\/b$", "a/b"));
  EXPECT_TRUE(matches("^\\cJ$", "\n"));
  EXPECT_TRUE(matches("^\\t\\n\\r\\v\\f$", "\t\n\r\v\f"));
  EXPECT_TRUE(matches("^[\\b]$", "\b"));
  EXPECT_TRUE(matches("^a{$", "a{"));
  EXPECT_TRUE(matches("^a{1,x}$", "a{1,x}"));
  EXPECT_TRUE(matches("^a{2,3}$", "aaa"));
  EXPECT_FALSE(matches("^a{2,3}$", "aaaa"));
  EXPECT_TRUE(matches("^}]$", "}]"));
  EXPECT_TRUE(matches("^[\\d-z]+$", "1-z"));  // a class escape at a range's end: three members
  EXPECT_FALSE(matches("^[\\d-z]$", "m"));
  EXPECT_TRUE(matches("^[[:alpha:]]$", ":]"));  // no POSIX classes in ECMA-262
  EXPECT_TRUE(matches("^\\A$", "A"));           // an identity escape, not RE2's \A
  EXPECT_TRUE(matches("^(?<year>\\d{4})-(?:\\d\\d)$", "2026-11"));
  EXPECT_TRUE(matches("^(a|b)*?c$", "ababc"));
  EXPECT_TRUE(matches("^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\$", ".*+?()[]{}|^$\\"));
}

TEST(EcmaRegexTranslation, ClassesAreWrittenOutAsRanges) {
  std::string error;
  EXPECT_EQ(detail::translate_ecma_regex("^\\d$", error), "^[\\x{30}-\\x{39}]$");
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(detail::translate_ecma_regex("(?<n>a)", error), "(?P<n>a)");
  EXPECT_EQ(detail::translate_ecma_regex("\\0", error), "\\x{0}");
  EXPECT_EQ(detail::translate_ecma_regex("(?=a)", error), "");
  EXPECT_NE(error.find("lookahead"), std::string::npos);
}

TEST(EcmaRegexTranslation, SharedRegexesAreCompiledOnce) {
  const auto first = detail::shared_regex("^x-");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(detail::shared_regex("^x-"), first);
  EXPECT_TRUE(detail::search_pattern("^x-", "x-custom"));
  EXPECT_FALSE(detail::search_pattern("^x-", "y"));
  EXPECT_FALSE(detail::search_pattern("(?=x)", "x"));  // refused patterns match nothing
}

}  // namespace
}  // namespace hearth::schema
