#include "a2s/search/wordnet.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace hearth::a2s {
namespace {

bool has(const std::vector<RelatedWord>& words, std::string_view word, Relation relation) {
  return std::any_of(words.begin(), words.end(), [&](const RelatedWord& r) {
    return r.word == word && r.relation == relation;
  });
}

/// A database of a few synsets, written as wndb(5WN) says: licence lines starting with a space,
/// hexadecimal word counts, adjective markers, byte offsets as the first field of data lines.
class TinyWordNet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hearth-wn-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string licence = "  1 This software and database is being provided\n";
    // data.noun: three synsets; each line's offset is its own byte position.
    std::string noun = licence;
    const auto at = [&](std::string& file) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%08zu", file.size());
      return std::string(buf);
    };
    const std::string smog_at = at(noun);
    const std::string pollution_at = std::string(8, '0');  // patched below
    std::string smog_line =
        smog_at +
        " 26 n 02 smog 0 smogginess 0 001 @ PPPPPPPP n 0000 | air pollution by smoke and fog\n";
    noun += smog_line;
    const std::string poll_at = at(noun);
    noun += poll_at + " 26 n 01 air_pollution 0 000 | pollution of the atmosphere\n";
    const std::string city_at = at(noun);
    noun += city_at + " 15 n 01 Phoenix 0 001 @i " + poll_at + " n 0000 | a city in Arizona\n";
    noun.replace(noun.find("PPPPPPPP"), 8, poll_at);
    (void)pollution_at;
    write("data.noun", noun);
    write("index.noun", licence + "air_pollution n 1 0 1 0 " + poll_at + "\nphoenix n 1 1 @i 1 0 " +
                            city_at + "\nsmog n 1 1 @ 1 0 " + smog_at + "\n");
    std::string adj = licence;
    const std::string cheap_at = at(adj);
    adj += cheap_at + " 00 a 02 cheap(a) 0 inexpensive 0 000 | relatively low in price\n";
    write("data.adj", adj);
    write("index.adj", licence + "cheap a 1 0 1 0 " + cheap_at + "\n");
    write("data.verb", licence);
    write("index.verb", licence);
    write("data.adv", licence);
    write("index.adv", licence);
    write("noun.exc", "smogs smog\n");
    write("adj.exc", "cheapest cheap\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }

  std::filesystem::path dir_;
};

TEST_F(TinyWordNet, ReadsSynonymsBroaderTermsGlossesAndInstances) {
  const auto wn = WordNet::open(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_TRUE(wn->known("smog"));
  EXPECT_TRUE(wn->known("smogs"));  // the exception list
  EXPECT_TRUE(wn->known("air pollution"));
  EXPECT_FALSE(wn->known("wheather"));
  // A lemma as written: not an inflected form, not a phrase.
  EXPECT_TRUE(wn->is_lemma("smog"));
  EXPECT_FALSE(wn->is_lemma("smogs"));
  EXPECT_FALSE(wn->is_lemma("wheather"));
  EXPECT_FALSE(wn->is_lemma("air pollution"));
  // The nouns of two words: their first words, and the nouns, the second word in the plural too.
  EXPECT_TRUE(wn->begins_compound("air"));
  EXPECT_FALSE(wn->begins_compound("pollution"));
  EXPECT_FALSE(wn->begins_compound("smog"));
  EXPECT_TRUE(wn->is_compound("air", "pollution"));
  EXPECT_TRUE(wn->is_compound("air", "pollutions"));
  EXPECT_FALSE(wn->is_compound("air", "pollutoin"));
  EXPECT_FALSE(wn->is_compound("smog", "pollution"));
  const auto smog = wn->related("smogs");
  EXPECT_TRUE(has(smog, "smogginess", Relation::kSynonym));
  EXPECT_TRUE(has(smog, "air pollution", Relation::kBroader));
  EXPECT_TRUE(has(smog, "fog", Relation::kGloss));
  EXPECT_FALSE(has(smog, "smog", Relation::kSynonym));  // not the word itself
  // The adjective marker "(a)" is not part of the word; "cheapest" comes from the exceptions.
  const auto cheap = wn->related("cheapest");
  EXPECT_TRUE(has(cheap, "inexpensive", Relation::kSynonym));
  EXPECT_TRUE(wn->proper_noun("Phoenix"));
  EXPECT_FALSE(wn->proper_noun("smog"));
}

// A word's frequency is the sense counts of its base forms' senses in cntlist.rev, lines
// sorted by sense key ("smog%..." before "smog_bank%..." and "smoggy%..."); none without it.
TEST_F(TinyWordNet, AWordsFrequencyIsItsSensesCounts) {
  EXPECT_EQ(WordNet::open(dir_)->frequency("smog"), 0U);
  write("cntlist.rev",
        "air_pollution%1:26:00:: 1 4\nsmog%1:26:00:: 1 7\nsmog%1:26:01:: 2 2\n"
        "smog_bank%1:26:00:: 1 50\nsmoggy%5:00:00:polluted:00 1 9\n");
  const auto wn = WordNet::open(dir_);
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->frequency("smog"), 9U);
  EXPECT_EQ(wn->frequency("smogs"), 9U);  // by its base form
  EXPECT_EQ(wn->frequency("air pollution"), 4U);
  EXPECT_EQ(wn->frequency("phoenix"), 0U);
  EXPECT_EQ(wn->frequency("wheather"), 0U);
}

TEST_F(TinyWordNet, MissingFilesMeanNoWordNet) {
  std::filesystem::remove(dir_ / "data.noun");
  EXPECT_EQ(WordNet::open(dir_), nullptr);
  EXPECT_EQ(WordNet::open(dir_ / "nowhere"), nullptr);
}

// The system's copy (Debian's wordnet-base, installed by scripts/install-deps.sh).
TEST(SystemWordNet, RelatesEverydayWordsToWhatApisCallThem) {
  const WordNet* wn = WordNet::system();
  ASSERT_NE(wn, nullptr) << "install wordnet-base (scripts/install-deps.sh)";
  EXPECT_TRUE(has(wn->related("bucks"), "dollar", Relation::kSynonym));
  const auto shares = wn->related("shares");
  EXPECT_TRUE(has(shares, "stock", Relation::kSynonym) || has(shares, "stock", Relation::kBroader));
  EXPECT_TRUE(has(wn->related("film"), "movie", Relation::kSynonym));
  EXPECT_TRUE(has(wn->related("smog"), "air pollution", Relation::kBroader));
  // Relations of some parts of speech only: "book" reserves as a verb, not as a noun; a word
  // with no sense in the parts asked for relates through all of its senses.
  EXPECT_TRUE(has(wn->related("book"), "reserve", Relation::kSynonym));
  EXPECT_TRUE(has(wn->related("book", 4, WordNet::kVerb), "reserve", Relation::kSynonym));
  EXPECT_FALSE(has(wn->related("book", 4, WordNet::kNoun), "reserve", Relation::kSynonym));
  EXPECT_TRUE(has(wn->related("book", 4, WordNet::kNoun), "publication", Relation::kBroader));
  EXPECT_TRUE(has(wn->related("smog", 4, WordNet::kVerb), "air pollution", Relation::kBroader));
  EXPECT_TRUE(wn->proper_noun("phoenix"));
  EXPECT_TRUE(wn->proper_noun("lisbon"));
  EXPECT_TRUE(wn->proper_noun("german"));
  EXPECT_FALSE(wn->names_instance("german"));
  EXPECT_TRUE(wn->names_instance("phoenix"));
  // A place's regions, nearest first; a word that names no place has none.
  EXPECT_EQ(wn->regions("vienna"), (std::vector<std::string>{"austria", "republic of austria",
                                                             "oesterreich", "europe", "eurasia"}));
  EXPECT_EQ(wn->regions("vienna", 1).front(), "austria");
  EXPECT_TRUE(wn->regions("weather").empty());
  EXPECT_FALSE(wn->proper_noun("sms"));       // an acronym
  EXPECT_FALSE(wn->proper_noun("meds"));      // "MEd", a degree's abbreviation
  EXPECT_FALSE(wn->proper_noun("zip code"));  // "ZIP code": an acronym's phrase, no name
  // A head adjective's satellites are its kinds when there are many ("bad": 21, corked among
  // them), its likenesses when few ("expensive": costly).
  EXPECT_FALSE(has(wn->related("bad"), "corked", Relation::kSimilar));
  EXPECT_TRUE(has(wn->related("expensive"), "costly", Relation::kSimilar));
  EXPECT_TRUE(wn->proper_noun("new york"));
  EXPECT_FALSE(wn->proper_noun("mobile"));  // a common adjective first
  EXPECT_TRUE(wn->proper_noun("english"));
  EXPECT_FALSE(wn->proper_noun("weather"));
  EXPECT_FALSE(wn->proper_noun("apple"));
  // Capitalised in the database, but a unit ("Calorie"), not a place, a people or a language.
  EXPECT_FALSE(wn->proper_noun("calories"));
  EXPECT_TRUE(wn->proper_noun("cambridge"));  // first the university; a city too
  // The place a word names, then every place that holds it; a place's adjective stands for it,
  // and a word that also names a language is none.
  const auto offsets = [&](std::string_view word) {
    std::vector<std::size_t> out;
    for (const auto& part : wn->place(word)) out.push_back(part.offset);
    return out;
  };
  const auto nairobi = wn->place("nairobi");
  const auto kenya = offsets("kenya");
  const auto africa = offsets("africa");  // a continent: noun.object, with places as parts
  ASSERT_FALSE(nairobi.empty());
  ASSERT_FALSE(kenya.empty());
  ASSERT_FALSE(africa.empty());
  EXPECT_EQ(nairobi.front().steps, 0);
  const auto step_of = [&](std::size_t offset) {
    for (const auto& part : nairobi) {
      if (part.offset == offset) return part.steps;
    }
    return -1;
  };
  EXPECT_EQ(step_of(kenya.front()), 1);
  EXPECT_EQ(step_of(africa.front()), 2);
  EXPECT_EQ(std::find(africa.begin(), africa.end(), kenya.front()), africa.end());
  EXPECT_EQ(offsets("canadian").front(), offsets("canada").front());
  EXPECT_TRUE(wn->place("english").empty());    // a language
  EXPECT_TRUE(wn->place("java").empty());       // an island, and a language
  EXPECT_TRUE(wn->place("cambridge").empty());  // first the university
  EXPECT_TRUE(wn->place("thames").empty());     // a river
  EXPECT_TRUE(wn->place("calories").empty());
  EXPECT_TRUE(wn->place("weather").empty());
  EXPECT_GT(wn->place("sao paulo").size(), 1U);
  // Whether a sense of the word was seen in the tagged corpus: "bob" as a verb was.
  EXPECT_FALSE(wn->in_use("anna"));
  EXPECT_FALSE(wn->in_use("safari"));
  EXPECT_TRUE(wn->in_use("bob"));
  EXPECT_TRUE(wn->in_use("views"));
  EXPECT_TRUE(wn->known("space station"));
  EXPECT_FALSE(wn->known("wheather"));
}

// The binary search finds lemmas all through the index files: every 25th line of each.
// Of a misspelling's neighbours, the word met most often: "ssying" is more likely "saying".
// A word written in capitals relates through the senses WordNet writes in capitals only.
TEST(SystemWordNet, AnAcronymRelatesThroughTheSensesWrittenInCapitals) {
  const WordNet* wn = WordNet::system();
  ASSERT_NE(wn, nullptr) << "install wordnet-base (scripts/install-deps.sh)";
  const auto sloth = [](const std::vector<RelatedWord>& words) {
    return has(words, "three-toed sloth", Relation::kSynonym);
  };
  EXPECT_TRUE(sloth(wn->related("ai")));
  const auto acronym = wn->related("ai", 4, WordNet::kAnyPart, /*capitals=*/true);
  EXPECT_FALSE(sloth(acronym));
  EXPECT_TRUE(has(acronym, "artificial intelligence", Relation::kSynonym));
  // A word WordNet never writes in capitals relates as it does in lower case.
  EXPECT_EQ(wn->related("weather", 4, WordNet::kAnyPart, true).size(),
            wn->related("weather").size());
}

TEST(SystemWordNet, SaysHowOftenAWordWasMet) {
  const WordNet* wn = WordNet::system();
  ASSERT_NE(wn, nullptr);
  EXPECT_GT(wn->frequency("saying"), wn->frequency("spying"));
  EXPECT_GT(wn->frequency("spying"), 0U);
  EXPECT_EQ(wn->frequency("wheather"), 0U);
  // Most of the rare lemmas are kinds of animal or plant.
  EXPECT_TRUE(wn->names_organism("wheatear"));
  EXPECT_TRUE(wn->names_organism("oaks"));
  EXPECT_FALSE(wn->names_organism("sunrise"));
  EXPECT_FALSE(wn->names_organism("wheather"));
}

TEST(SystemWordNet, FindsLemmasThroughoutTheIndexFiles) {
  const WordNet* wn = WordNet::system();
  ASSERT_NE(wn, nullptr);
  const char* dir = std::getenv("HEARTH_WORDNET");
  const std::filesystem::path base = dir != nullptr && *dir != '\0' ? dir : "/usr/share/wordnet";
  std::size_t checked = 0;
  for (const char* pos : {"noun", "verb", "adj", "adv"}) {
    std::ifstream in(base / (std::string("index.") + pos));
    std::string line;
    for (std::size_t n = 0; std::getline(in, line); ++n) {
      if (line.empty() || line[0] == ' ' || n % 25 != 0) continue;
      const std::string lemma = line.substr(0, line.find(' '));
      ASSERT_TRUE(wn->known(lemma)) << pos << ": " << lemma;
      if (lemma.find('_') == std::string::npos) {
        ASSERT_TRUE(wn->is_lemma(lemma)) << pos << ": " << lemma;
        ASSERT_FALSE(wn->is_lemma(lemma + "qx")) << pos << ": " << lemma;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000U);
}

}  // namespace
}  // namespace hearth::a2s
