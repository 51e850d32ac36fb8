#include "agentapp/package/yaml_subset.hpp"

#include <gtest/gtest.h>

#include "agentapp/package/jsv.hpp"

namespace hearth::agentapp {
namespace {

std::string read(std::string_view yaml) {
  return jsv::stringify(parse_yaml_subset(yaml));
}

TEST(YamlSubset, ReadsMapsListsAndScalars) {
  EXPECT_EQ(read("name: demo\n"
                 "# a comment\n"
                 "nested:\n"
                 "  a: 1\n"
                 "  b:\n"
                 "    c: true\n"
                 "list:\n"
                 "  - one\n"
                 "  - key: k\n"
                 "    title: T\n"
                 "  - 2\n"),
            R"({"name":"demo","nested":{"a":1,"b":{"c":true}},)"
            R"("list":["one",{"key":"k","title":"T"},2]})");
}

TEST(YamlSubset, CoercesScalarsAfterRemovingQuotes) {
  EXPECT_EQ(read("a: \"123\"\n"
                 "b: '1.0'\n"
                 "c: 0.10\n"
                 "d: 007\n"
                 "e: \"true\"\n"
                 "f: null\n"
                 "g: ~\n"
                 "h: yes\n"
                 "i: True\n"
                 "j: \"mixed'\n"
                 "k: 2026-11-25T00:00:00Z\n"
                 "l: -0\n"
                 "m: 1.5.0\n"),
            R"({"a":123,"b":1,"c":0.1,"d":7,"e":true,"f":null,"g":"~","h":"yes","i":"True",)"
            R"("j":"\"mixed'","k":"2026-11-25T00:00:00Z","l":0,"m":"1.5.0"})");
}

TEST(YamlSubset, KeepsTrailingCommentsAndLeavesFlowMappingsAsText) {
  EXPECT_EQ(read("a: x # note\nb: {c: 1}\n"), R"({"a":"x # note","b":"{c: 1}"})");
}

TEST(YamlSubset, SplitsInlineListsOnEveryComma) {
  EXPECT_EQ(read("a: [x, \"y,z\", 1, , true]\nb: []\nc: [[q]]\n"),
            R"({"a":["x","\"y","z\"",1,true],"b":[],"c":[["q"]]})");
}

TEST(YamlSubset, DropsASequenceAtItsKeysIndentationAndLeaksItsLines) {
  EXPECT_EQ(read("entries:\n- key: a\n  title: A\nname: x\n"),
            R"({"entries":[],"title":"A","name":"x"})");
}

TEST(YamlSubset, PutsANestedValueOfAnItemsFirstKeyOnTheItem) {
  EXPECT_EQ(read("items:\n  - planes:\n      app: x\n      - dropped\n"),
            R"({"items":[{"planes":{},"app":"x"}]})");
}

TEST(YamlSubset, TurnsAListScalarWithAColonIntoAnObject) {
  EXPECT_EQ(read("urls:\n  - \"http://x\"\n  - plain\n"),
            R"({"urls":[{"\"http":"//x\""},"plain"]})");
}

TEST(YamlSubset, ReadsBlockScalarIndicatorsAsTextAndLeaksWhatFollows) {
  EXPECT_EQ(read("description: |\n  first line\n  key: leaked\nname: n\n"),
            R"({"description":"|","key":"leaked","name":"n"})");
}

TEST(YamlSubset, ABareDashMakesTheParentAnObject) {
  EXPECT_EQ(read("list:\n  -\n    a: 1\n"), R"({"list":{"a":1}})");
}

TEST(YamlSubset, ARepeatedKeyKeepsItsFirstPlace) {
  EXPECT_EQ(read("a: 1\nb: 2\na: 3\n"), R"({"a":3,"b":2})");
}

TEST(YamlSubset, QuotedKeysKeepTheirQuotesAndIndexKeysComeFirst) {
  EXPECT_EQ(read("\"k\": v\nb: 1\n10: x\n2: y\n"), R"({"2":"y","10":"x","\"k\"":"v","b":1})");
}

TEST(YamlSubset, SplitsTheKeyAtTheFirstColon) {
  EXPECT_EQ(read("a:b: c\nurl: http://x:80/p\n"), R"({"a":"b: c","url":"http://x:80/p"})");
}

TEST(YamlSubset, MakesAProtoKeyThePrototypeOfItsObject) {
  // Not an own member (not written, not spread) but read through, as JavaScript does.
  const json::value v = parse_yaml_subset("__proto__:\n  name: x\n  b: 0\nb: 1\n__proto__: 5\n");
  EXPECT_EQ(jsv::stringify(v), R"({"b":1})");
  EXPECT_EQ(*jsv::get(&v, "name"), "x");
  EXPECT_EQ(*jsv::get(&v, "b"), 1.0);
  EXPECT_EQ(jsv::own_keys(v.get_object()).size(), 1u);
}

TEST(YamlSubset, ReadsCrlfLinesAsTrimmed) {
  EXPECT_EQ(read("a: 1\r\nb: two\r\n"), R"({"a":1,"b":"two"})");
}

TEST(FrontMatter, IsFoundOnlyAtTheVeryStart) {
  EXPECT_EQ(front_matter("---\nname: x\n---\nbody"), "name: x");
  EXPECT_EQ(front_matter("---\n---\nx\n---\n"), "---\nx");
  EXPECT_EQ(front_matter("---\n\n---\n"), "");
  EXPECT_FALSE(front_matter("---\r\nname: x\r\n---\r\n"));
  EXPECT_FALSE(front_matter("\xEF\xBB\xBF---\nname: x\n---\n"));
  EXPECT_FALSE(front_matter("---\nname: x\n"));
  EXPECT_FALSE(front_matter("# title\n---\nname: x\n---\n"));
  // The closing line only has to begin with ---.
  EXPECT_EQ(front_matter("---\nname: x\n-----more\n"), "name: x");
}

}  // namespace
}  // namespace hearth::agentapp
