#include "a2s/search/spelling.hpp"

#include <gtest/gtest.h>

namespace hearth::a2s {
namespace {

std::vector<std::string> corrected(const SpellingIndex& index, std::string_view word) {
  std::vector<std::string> out;
  for (const auto& c : index.correct(word)) out.push_back(index.word(c.word));
  return out;
}

TEST(Spelling, FindsTheVocabularyWordWithinTheAllowedEdits) {
  const SpellingIndex index({{"weather", 9},
                             {"currency", 5},
                             {"translate", 3},
                             {"leather", 1},
                             {"receive", 2},
                             {"exchange", 4}});
  EXPECT_EQ(corrected(index, "wheather"), std::vector<std::string>{"weather"});     // insertion
  EXPECT_EQ(corrected(index, "curency"), std::vector<std::string>{"currency"});     // deletion
  EXPECT_EQ(corrected(index, "transalte"), std::vector<std::string>{"translate"});  // swap
  EXPECT_EQ(corrected(index, "recieve"), std::vector<std::string>{"receive"});
  EXPECT_EQ(corrected(index, "exchnage"), std::vector<std::string>{"exchange"});
  EXPECT_EQ(corrected(index, "exhcnage"), std::vector<std::string>{"exchange"});  // two edits
  // Too far, or too short to correct safely.
  EXPECT_TRUE(corrected(index, "wxyther").empty());
  EXPECT_TRUE(corrected(index, "fx").empty());
  // Longer than every vocabulary word by more than two letters: nothing to look up.
  EXPECT_TRUE(corrected(index, std::string(100000, 'e')).empty());
  EXPECT_EQ(corrected(index, "transslatte"), std::vector<std::string>{"translate"});
  // The exact word is not a correction.
  EXPECT_TRUE(corrected(index, "weather").empty());
}

TEST(Spelling, TiesGoToTheMoreFrequentWord) {
  const SpellingIndex index({{"weather", 9}, {"leather", 1}});
  // "eather" is one edit from both.
  const auto got = corrected(index, "eather");
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0], "weather");
  EXPECT_EQ(SpellingIndex::allowed(3), 0U);
  EXPECT_EQ(SpellingIndex::allowed(7), 1U);
  EXPECT_EQ(SpellingIndex::allowed(8), 2U);
}

}  // namespace
}  // namespace hearth::a2s
