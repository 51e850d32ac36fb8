#include "common/suggest.hpp"

#include <gtest/gtest.h>

#include <array>

namespace hearth {
namespace {

TEST(Suggest, DistanceCountsEditsAndSwaps) {
  EXPECT_EQ(edit_distance("serve", "serve"), 0u);
  EXPECT_EQ(edit_distance("srve", "serve"), 1u);  // a deletion
  EXPECT_EQ(edit_distance("prot", "port"), 1u);   // a swap of neighbours
  EXPECT_EQ(edit_distance("fileAcess", "fileAccess"), 1u);
  EXPECT_EQ(edit_distance("netwrokAccess", "networkAccess"), 1u);
  EXPECT_EQ(edit_distance("PORT", "port"), 0u);  // case is not a misspelling
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Suggest, ClosestIsOnlyOfferedWhenClose) {
  const std::array<std::string, 5> commands{"serve", "status", "stop", "call", "check"};
  EXPECT_EQ(closest_word("srve", commands), "serve");
  EXPECT_EQ(closest_word("stauts", commands), "status");
  EXPECT_EQ(closest_word("chek", commands), "check");
  EXPECT_FALSE(closest_word("deploy", commands).has_value());
  EXPECT_FALSE(closest_word("x", commands).has_value());
  // The word itself is not a suggestion.
  EXPECT_FALSE(closest_word("serve", std::array<std::string, 1>{"serve"}).has_value());
}

}  // namespace
}  // namespace hearth
