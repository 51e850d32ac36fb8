#include "lafs/grapheme.hpp"

#include <gtest/gtest.h>

namespace hearth::lafs {
namespace {

TEST(LafsGrapheme, Clusters) {
  EXPECT_EQ(count_graphemes(""), 0u);
  EXPECT_EQ(count_graphemes("abc"), 3u);
  EXPECT_EQ(count_graphemes("\r\n"), 1u);               // GB3
  EXPECT_EQ(count_graphemes("e\xCC\x81"), 1u);          // e + combining acute
  EXPECT_EQ(count_graphemes("\xC3\xA9t\xC3\xA9"), 3u);  // précomposé
  EXPECT_EQ(count_graphemes("\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7"),
            1u);  // a flag: two regional indicators
  EXPECT_EQ(count_graphemes("\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7\xF0\x9F\x87\xA9\xF0\x9F\x87\xAA"),
            2u);
  EXPECT_EQ(count_graphemes("\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7\xF0\x9F\x87\xA9"),
            2u);  // a lone third
  // man + ZWJ + woman + ZWJ + girl: one family.
  EXPECT_EQ(
      count_graphemes("\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7"),
      1u);
  // thumbs up + skin tone modifier (Extend)
  EXPECT_EQ(count_graphemes("\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD"), 1u);
  // Hangul jamo L V T form one syllable; a precomposed syllable is one.
  EXPECT_EQ(count_graphemes("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), 1u);
  EXPECT_EQ(count_graphemes("\xED\x95\x9C\xEA\xB5\xAD"), 2u);
  // Devanagari with a spacing mark (GB9a): "ki" is one.
  EXPECT_EQ(count_graphemes("\xE0\xA4\x95\xE0\xA4\xBF"), 1u);
  // ZWJ between letters does not join them into one (GB11 is for pictographs only).
  EXPECT_EQ(count_graphemes("a\xE2\x80\x8D"
                            "b"),
            2u);
  EXPECT_EQ(count_graphemes("\x01\x02"), 2u);  // controls break
  EXPECT_EQ(count_graphemes("\xFF\xFE"), 2u);  // invalid bytes, one each
}

}  // namespace
}  // namespace hearth::lafs
