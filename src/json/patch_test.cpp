#include "json/patch.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace hearth::json {
namespace {

value parse(std::string_view text) {
  return boost::json::parse(text);
}

TEST(JsonPatch, DiffAppliedGivesTheTargetAndItsInverseGivesTheSource) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"a":1,"b":{"c":[1,2,3]}})", R"({"a":2,"b":{"c":[1,5]},"d":null})"},
      {R"([1,2])", R"([1,2,3,4])"},
      {R"({"x/y":{"~":1}})", R"({"x/y":{"~":2}})"},
      {R"("text")", R"({"now":"an object"})"},
      {R"({"list":[{"id":1},{"id":2}]})", R"({"list":[{"id":1,"done":true}]})"},
  };
  for (const auto& [a, b] : cases) {
    const value from = parse(a);
    const value to = parse(b);
    value doc = from;
    ASSERT_TRUE(apply_patch(doc, diff(from, to)).ok()) << a << " -> " << b;
    EXPECT_EQ(doc, to) << json::serialize(diff(from, to));
    ASSERT_TRUE(apply_patch(doc, diff(to, from)).ok());
    EXPECT_EQ(doc, from);
  }
}

TEST(JsonPatch, EqualValuesGiveNoOperations) {
  EXPECT_TRUE(diff(parse(R"({"a":[1,{"b":2}]})"), parse(R"({"a":[1,{"b":2}]})")).empty());
}

TEST(JsonPatch, PathsAreEscapedPointersUnderTheBase) {
  const auto ops = diff(parse(R"({"a/b":1})"), parse(R"({"a/b":2})"), "/state");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].at("path"), "/state/a~1b");
  EXPECT_EQ(ops[0].at("op"), "replace");
}

TEST(JsonPatch, AFailingOperationLeavesTheDocumentUnchanged) {
  value doc = parse(R"({"a":1})");
  const auto patch = parse(R"([{"op":"replace","path":"/a","value":2},
                               {"op":"remove","path":"/missing"}])")
                         .as_array();
  auto st = apply_patch(doc, patch);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("patch[1]"), std::string::npos);
  EXPECT_EQ(doc, parse(R"({"a":1})"));
}

TEST(JsonPatch, ReadsTestMoveAndCopy) {
  value doc = parse(R"({"a":{"b":1},"c":[]})");
  const auto patch = parse(R"([{"op":"test","path":"/a/b","value":1},
                               {"op":"copy","from":"/a","path":"/c/0"},
                               {"op":"move","from":"/a/b","path":"/moved"}])")
                         .as_array();
  ASSERT_TRUE(apply_patch(doc, patch).ok());
  EXPECT_EQ(doc, parse(R"({"a":{},"c":[{"b":1}],"moved":1})"));
  EXPECT_FALSE(
      apply_patch(doc, parse(R"([{"op":"move","from":"/c","path":"/c/0"}])").as_array()).ok());
  EXPECT_FALSE(
      apply_patch(doc, parse(R"([{"op":"test","path":"/moved","value":2}])").as_array()).ok());
}

TEST(JsonPatch, FindPointer) {
  const value doc = parse(R"({"a":[{"b~c":3}]})");
  ASSERT_NE(find_pointer(doc, "/a/0/b~0c"), nullptr);
  EXPECT_EQ(*find_pointer(doc, "/a/0/b~0c"), 3);
  EXPECT_EQ(find_pointer(doc, ""), &doc);
  EXPECT_EQ(find_pointer(doc, "/a/01"), nullptr);
  EXPECT_EQ(find_pointer(doc, "a"), nullptr);
}

}  // namespace
}  // namespace hearth::json
