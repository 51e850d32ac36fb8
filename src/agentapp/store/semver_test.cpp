#include "agentapp/store/semver.hpp"

#include <gtest/gtest.h>

namespace hearth::agentapp {
namespace {

bool in(std::string_view version, std::string_view range) {
  auto v = parse_version(version);
  EXPECT_TRUE(v.has_value()) << version;
  auto r = satisfies(*v, range);
  EXPECT_TRUE(r.has_value()) << range;
  return r.value_or(false);
}

TEST(Semver, ParsesVersions) {
  EXPECT_EQ(parse_version("1.2.3"), (Version{1, 2, 3}));
  EXPECT_EQ(parse_version("v0.10.0"), (Version{0, 10, 0}));
  EXPECT_EQ(parse_version("1.0.0-beta.1"), (Version{1, 0, 0}));
  EXPECT_FALSE(parse_version("1.2").has_value());
  EXPECT_FALSE(parse_version("one").has_value());
  EXPECT_FALSE(parse_version("1..2").has_value());
}

TEST(Semver, CaretTildeAndComparators) {
  EXPECT_TRUE(in("1.0.0", "^1.0"));
  EXPECT_TRUE(in("1.9.3", "^1.2"));
  EXPECT_FALSE(in("2.0.0", "^1.2"));
  EXPECT_FALSE(in("1.1.9", "^1.2"));
  EXPECT_TRUE(in("0.2.9", "^0.2.3"));
  EXPECT_FALSE(in("0.3.0", "^0.2.3"));
  EXPECT_FALSE(in("0.0.4", "^0.0.3"));
  EXPECT_TRUE(in("1.2.9", "~1.2.3"));
  EXPECT_FALSE(in("1.3.0", "~1.2.3"));
  EXPECT_TRUE(in("1.3.0", ">1.2"));
  EXPECT_FALSE(in("1.2.9", ">1.2"));
  EXPECT_TRUE(in("1.2.9", "<=1.2"));
  EXPECT_TRUE(in("1.0.0", ">=1.0.0 <2"));
  EXPECT_FALSE(in("2.0.0", ">=1.0.0 <2"));
  EXPECT_TRUE(in("1.0.0", ">= 1.0"));
  EXPECT_TRUE(in("3.1.0", "^1.0 || ^3.0"));
  EXPECT_TRUE(in("1.5.0", "1.x"));
  EXPECT_TRUE(in("1.5.0", "1"));
  EXPECT_FALSE(in("2.0.0", "1.x"));
  EXPECT_TRUE(in("7.0.0", "*"));
  EXPECT_TRUE(in("7.0.0", ""));
  EXPECT_TRUE(in("1.2.0", "1.0 - 1.2"));
  EXPECT_FALSE(in("1.3.0", "1.0 - 1.2"));
  EXPECT_TRUE(in("1.2.3", "=1.2.3"));
  EXPECT_FALSE(in("1.2.4", "1.2.3"));
}

TEST(Semver, UnreadableRangesAreNotGuessed) {
  const Version v{1, 0, 0};
  EXPECT_FALSE(satisfies(v, "latest").has_value());
  EXPECT_FALSE(satisfies(v, "^one").has_value());
  EXPECT_FALSE(satisfies(v, ">=1.0 <").has_value());
}

}  // namespace
}  // namespace hearth::agentapp
