#include "a2s/search/thesaurus.hpp"

#include <gtest/gtest.h>

#include "a2s/search/search.hpp"

namespace hearth::a2s {
namespace {

/// The words of `text` as a stand-in for the search reads them: lower-case words split at
/// anything else, a final "s" dropped (a stem), and "the", "to" and "a" left out unless
/// `every_word`.
std::vector<std::string> stand_in_words(std::string_view text, bool every_word) {
  std::vector<std::string> out;
  std::string word;
  const auto flush = [&] {
    if (!every_word && (word == "the" || word == "to" || word == "a")) word.clear();
    if (word.size() > 3 && word.back() == 's') word.pop_back();
    if (!word.empty()) out.push_back(word);
    word.clear();
  };
  for (const char c : text) {
    if (c >= 'a' && c <= 'z') {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

/// A stand-in for the search's terms (stop words left out).
std::vector<std::string> simple_terms(std::string_view text) {
  return stand_in_words(text, false);
}

/// The same with no word left out: the words of a quoted phrase.
std::vector<std::string> every_word(std::string_view text) {
  return stand_in_words(text, true);
}

using Strings = std::vector<std::string>;

Strings found(const Thesaurus& t, const std::string& key) {
  const auto* more = t.find(key);
  return more == nullptr ? Strings{} : *more;
}

TEST(Thesaurus, MapsWordsAndPhrasesToTermsInTheirOrder) {
  std::vector<std::string> errors;
  const auto t = Thesaurus::parse(
      "# a comment\n"
      "\n"
      "bucks, quid => dollar, pound, currency\n"
      "space station => iss, orbit\n"
      "text to speech => tts, speech synthesis\r\n",
      simple_terms, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(found(t, "buck"), (Strings{"dollar", "pound", "currency"}));
  EXPECT_EQ(found(t, "quid"), (Strings{"dollar", "pound", "currency"}));
  EXPECT_EQ(found(t, "space station"), (Strings{"iss", "orbit"}));
  // Stop words are left out of a phrase's key; a phrase's own words ("speech") are not its
  // expansions, and a term phrase's words each become a term.
  EXPECT_EQ(found(t, "text speech"), (Strings{"tts", "synthesi"}));
  // One way only: the terms do not expand back.
  EXPECT_TRUE(found(t, "dollar").empty());
  EXPECT_TRUE(found(t, "space").empty());
  const std::vector<std::string> phrase = {"space", "station"};
  EXPECT_EQ(Thesaurus::key(phrase), "space station");
}

TEST(Thesaurus, ALineWithoutArrowListsWordsThatMeanTheSame) {
  const auto t = Thesaurus::parse("smog, haze, air quality\n", simple_terms);
  EXPECT_EQ(found(t, "smog"), (Strings{"haze", "air", "quality"}));
  EXPECT_EQ(found(t, "haze"), (Strings{"smog", "air", "quality"}));
  EXPECT_EQ(found(t, "air quality"), (Strings{"smog", "haze"}));
}

TEST(Thesaurus, LinesForOneWordAddUpWithoutRepeats) {
  const auto t = Thesaurus::parse(
      "film => movie, cinema\n"
      "film => cinema, screening\n"
      "film, movie\n",
      simple_terms);
  EXPECT_EQ(found(t, "film"), (Strings{"movie", "cinema", "screening"}));
  EXPECT_EQ(found(t, "movie"), (Strings{"film"}));
}

TEST(Thesaurus, MalformedLinesAreSkippedAndNamed) {
  std::vector<std::string> errors;
  const auto t = Thesaurus::parse(
      "ok => fine\n"
      "lonely\n"
      "=> orphan\n"
      "left =>\n"
      "a, b => c\n"
      "one two three four => many\n"
      "x,, y => z\n"
      "good => nice\n"
      "the check => verify\n"
      "go back, return => to the start\n",
      simple_terms, &errors);
  const std::string one_word =
      "line 9: \"the check\" is one word but for stop words; write that word, or quote the phrase";
  EXPECT_EQ(errors, (Strings{"line 2: one item and no \"=>\"", "line 3: an empty item",
                             "line 4: an empty item", "line 5: \"a\" has only stop words",
                             "line 6: \"one two three four\" is longer than 3 words",
                             "line 7: an empty item", one_word}));
  // A phrase that keeps one word is refused among the words looked up, not among the terms.
  EXPECT_EQ(found(t, "go back"), (Strings{"start"}));
  EXPECT_EQ(found(t, "ok"), (Strings{"fine"}));
  EXPECT_EQ(found(t, "good"), (Strings{"nice"}));
  EXPECT_TRUE(found(t, "left").empty());
  EXPECT_TRUE(found(t, "x").empty());
  EXPECT_TRUE(found(t, "check").empty());
  EXPECT_EQ(t.size(), 4U);
}

// A quoted phrase is read word for word, its stop words kept, and looked up apart from the
// phrases of content words alone: "things to do" is not "things".
TEST(Thesaurus, AQuotedPhraseKeepsItsStopWords) {
  std::vector<std::string> errors;
  const auto t = Thesaurus::parse(
      "\"things to do\", sightseeing => attraction, activity\n"
      "\"to the\" => nothing\n"
      "\"sunny day\" => weather\n"
      "\"go to the big shops\" => shopping\n"
      "weather => \"to the sky\"\n"
      "\"to do\", chore\n",
      simple_terms, &errors, every_word);
  EXPECT_EQ(t.find_literal("thing to do") == nullptr ? Strings{} : *t.find_literal("thing to do"),
            (Strings{"attraction", "activity"}));
  EXPECT_EQ(found(t, "sightseeing"), (Strings{"attraction", "activity"}));
  EXPECT_TRUE(found(t, "thing").empty());
  EXPECT_EQ(t.find_literal("thing"), nullptr);
  EXPECT_EQ(errors, (Strings{"line 2: \"to the\" has only stop words",
                             "line 3: \"sunny day\" has no stop word; write it without quotes",
                             "line 4: \"go to the big shops\" is longer than 4 words",
                             "line 5: a quoted phrase \"to the sky\" where only words are read",
                             "line 6: a quoted phrase \"to do\" where only words are read"}));
  // Without a reader of every word, a quoted phrase is refused.
  std::vector<std::string> refused;
  const auto none = Thesaurus::parse("\"things to do\" => attraction\n", simple_terms, &refused);
  EXPECT_EQ(none.size(), 0U);
  EXPECT_EQ(refused.size(), 1U);
}

// The words of its phrases, for a misspelling of one of them: each once, quoted phrases' too.
TEST(Thesaurus, ListsTheWordsOfItsPhrases) {
  const auto t = Thesaurus::parse(
      "text to speech, read aloud => tts\n"
      "\"things to do\", sightseeing => attraction\n"
      "speech => voice\n",
      simple_terms, nullptr, every_word);
  EXPECT_EQ(t.phrase_words(), (Strings{"aloud", "do", "read", "speech", "text", "thing", "to"}));
}

TEST(Thesaurus, AnItemThatIsItsOwnExpansionAddsNothing) {
  const auto t = Thesaurus::parse("weather => weather\nforecast, forecast\n", simple_terms);
  EXPECT_TRUE(found(t, "weather").empty());
  EXPECT_TRUE(found(t, "forecast").empty());
  EXPECT_EQ(t.size(), 0U);
}

TEST(Thesaurus, TheCompiledInVocabularyHasNoMalformedLine) {
  EXPECT_EQ(thesaurus_errors(), Strings{});
}

}  // namespace
}  // namespace hearth::a2s
