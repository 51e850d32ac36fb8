#include "a2s/search/search.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "a2s/search/spelling.hpp"
#include "a2s/search/thesaurus.hpp"
#include "a2s/search/thesaurus_text.hpp"
#include "a2s/search/wordnet.hpp"
#include "common/ascii.hpp"

namespace hearth::a2s {
namespace {

// BM25F (docs/a2s.md, "Search"). One document per capability, its fields weighted:
enum Field {
  kCapName,
  kCapDescription,
  kServiceName,
  kServiceDescription,
  kVariables,
  kExamples,
  kFields
};
constexpr float kWeights[kFields] = {3.0F, 2.0F, 2.0F, 1.5F, 0.6F, 0.4F};
constexpr float kB[kFields] = {0.5F, 0.75F, 0.5F, 0.75F, 0.75F, 0.75F};
constexpr float kK1 = 1.2F;
/// Expansion terms count this much of the term they come from: the curated vocabulary's, and
/// WordNet's synonyms (its other relations count less: relation_weight).
constexpr float kCuratedWeight = 0.5F;
/// A phrase of the curated vocabulary says more than one word of it.
constexpr float kPhraseWeight = 0.6F;
/// A curated phrase's meaning in the groups of its other words: below its last word's, so that
/// a service holding a broad word of the meaning ("cheap flights": fare) does not get twice what
/// the phrase's own words give.
constexpr float kPhraseOtherWordsWeight = 0.45F;
constexpr float kSynonymWeight = 0.6F;
/// A part of a name written in camelCase in a definition's text ("YouTube": tube) counts this
/// much of a word.
constexpr float kNamePartShare = 0.5F;

/// The longest word read as a word: split into two words, indexed for spelling correction.
constexpr std::size_t kLongestWord = SpellingIndex::kLongestWord;

const std::unordered_set<std::string>& stop_words() {
  static const std::unordered_set<std::string> kWords = {
      "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "for", "from",
      "get", "give", "have", "how", "i", "i'd", "i'm", "in", "is", "it", "its", "let", "me", "my",
      "need", "of", "on", "or", "our", "please", "s", "show", "so", "some", "that", "the", "their",
      "them", "then", "there", "this", "to", "up", "us", "use", "want", "was", "we", "what",
      "whats", "when", "where", "which", "who", "will", "with", "would", "you", "your", "t",
      "about", "into", "than", "also", "just", "like", "find", "tell", "know", "all", "via",
      "using", "based",
      // light verbs and filler whose WordNet senses would only add noise
      "does", "did", "doing", "done", "go", "goes", "going", "gets", "got", "getting", "see",
      "should", "shall", "may", "might", "must", "am", "were", "been", "being", "has", "had",
      "having", "usually", "really", "very", "anything", "something", "much", "many", "here",
      "these", "those", "they", "he", "she", "him", "her", "his", "if", "but", "not", "ive", "im",
      "id", "hey", "thanks", "look", "looking", "lets", "wants", "needs", "gives", "right",
      // pronouns WordNet does not have, which would otherwise be split ("every" "one")
      "everyone", "everybody", "everything", "someone", "somebody", "anyone", "anybody", "nobody",
      "myself", "yourself", "itself", "ourselves", "themselves", "whose", "whom", "yours"};
  return kWords;
}

/// The stop words of 4 letters or more, for a misspelt one ("whhich", "abotu").
const SpellingIndex& stop_word_spellings() {
  static const SpellingIndex kIndex = [] {
    std::vector<std::pair<std::string, std::uint32_t>> words;
    for (const auto& w : stop_words()) {
      if (w.size() >= 4 &&
          std::all_of(w.begin(), w.end(), [](char c) { return ascii::is_alpha(c); })) {
        words.emplace_back(w, 1);
      }
    }
    std::sort(words.begin(), words.end());
    return SpellingIndex(std::move(words));
  }();
  return kIndex;
}

/// A word of a text: lower case, and whether it was written with a capital.
struct Token {
  std::string text;
  bool capital = false;  ///< its first letter
  bool upper = true;     ///< every letter
  bool glued = false;    ///< written on to the previous token: camelCase ("YouTube": "Tube")
};

/// A Latin letter with a diacritic (U+00C0 to U+017F) as the ASCII letters it is written with
/// when they are missing ("é" e, "ß" ss, "ł" l), and whether it is a capital; empty for the two
/// signs in that range (× and ÷).
struct Folded {
  std::string_view ascii;
  bool upper;
};
constexpr Folded kFolded[] = {
    {"a", true},  {"a", true},   {"a", true},   {"a", true},   {"a", true},  {"a", true},
    {"ae", true}, {"c", true},   {"e", true},   {"e", true},   {"e", true},  {"e", true},
    {"i", true},  {"i", true},   {"i", true},   {"i", true},   {"d", true},  {"n", true},
    {"o", true},  {"o", true},   {"o", true},   {"o", true},   {"o", true},  {"", false},
    {"o", true},  {"u", true},   {"u", true},   {"u", true},   {"u", true},  {"y", true},
    {"th", true}, {"ss", false}, {"a", false},  {"a", false},  {"a", false}, {"a", false},
    {"a", false}, {"a", false},  {"ae", false}, {"c", false},  {"e", false}, {"e", false},
    {"e", false}, {"e", false},  {"i", false},  {"i", false},  {"i", false}, {"i", false},
    {"d", false}, {"n", false},  {"o", false},  {"o", false},  {"o", false}, {"o", false},
    {"o", false}, {"", false},   {"o", false},  {"u", false},  {"u", false}, {"u", false},
    {"u", false}, {"y", false},  {"th", false}, {"y", false},  {"a", true},  {"a", false},
    {"a", true},  {"a", false},  {"a", true},   {"a", false},  {"c", true},  {"c", false},
    {"c", true},  {"c", false},  {"c", true},   {"c", false},  {"c", true},  {"c", false},
    {"d", true},  {"d", false},  {"d", true},   {"d", false},  {"e", true},  {"e", false},
    {"e", true},  {"e", false},  {"e", true},   {"e", false},  {"e", true},  {"e", false},
    {"e", true},  {"e", false},  {"g", true},   {"g", false},  {"g", true},  {"g", false},
    {"g", true},  {"g", false},  {"g", true},   {"g", false},  {"h", true},  {"h", false},
    {"h", true},  {"h", false},  {"i", true},   {"i", false},  {"i", true},  {"i", false},
    {"i", true},  {"i", false},  {"i", true},   {"i", false},  {"i", true},  {"i", false},
    {"ij", true}, {"ij", false}, {"j", true},   {"j", false},  {"k", true},  {"k", false},
    {"k", false}, {"l", true},   {"l", false},  {"l", true},   {"l", false}, {"l", true},
    {"l", false}, {"l", true},   {"l", false},  {"l", true},   {"l", false}, {"n", true},
    {"n", false}, {"n", true},   {"n", false},  {"n", true},   {"n", false}, {"n", false},
    {"n", true},  {"n", false},  {"o", true},   {"o", false},  {"o", true},  {"o", false},
    {"o", true},  {"o", false},  {"oe", true},  {"oe", false}, {"r", true},  {"r", false},
    {"r", true},  {"r", false},  {"r", true},   {"r", false},  {"s", true},  {"s", false},
    {"s", true},  {"s", false},  {"s", true},   {"s", false},  {"s", true},  {"s", false},
    {"t", true},  {"t", false},  {"t", true},   {"t", false},  {"t", true},  {"t", false},
    {"u", true},  {"u", false},  {"u", true},   {"u", false},  {"u", true},  {"u", false},
    {"u", true},  {"u", false},  {"u", true},   {"u", false},  {"u", true},  {"u", false},
    {"w", true},  {"w", false},  {"y", true},   {"y", false},  {"y", true},  {"z", true},
    {"z", false}, {"z", true},   {"z", false},  {"z", true},   {"z", false}, {"s", false},
};
static_assert(std::size(kFolded) == 0x180 - 0xC0);

/// The words of a text: camelCase and snake_case split, letters and digits kept, lower-cased.
/// Latin letters with diacritics are written without them ("São Paulo" is "sao paulo",
/// "Pokémon" "pokemon": requests are often typed without them); other UTF-8 letters are kept as
/// they are.
std::vector<Token> tokens(std::string_view text) {
  std::vector<Token> out;
  Token current;
  char prev = 0;
  const auto flush = [&] {
    if (!current.text.empty()) out.push_back(std::move(current));
    current = {};
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0xC2 && u <= 0xC5 && i + 1 < text.size() &&
        (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      const unsigned cp = ((u & 0x1FU) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3FU);
      ++i;
      // Latin-1's signs and spaces ("°", "©", "«", "¿", no-break space), × and ÷ part words.
      const Folded* f = cp >= 0xC0 ? &kFolded[cp - 0xC0] : nullptr;
      if (f == nullptr || f->ascii.empty()) {
        flush();
        prev = 0;
        continue;
      }
      if (current.text.empty()) current.capital = f->upper;
      if (!f->upper) current.upper = false;
      current.text += f->ascii;
      prev = f->upper ? 'A' : 'a';
      continue;
    }
    const bool letter = ascii::is_alpha(c) || u >= 0x80;
    const bool digit = ascii::is_digit(c);
    if (!letter && !digit && c != '\'') {
      flush();
      prev = 0;
      continue;
    }
    if (c == '\'') {
      prev = c;
      continue;  // "what's" -> "whats"
    }
    // camelCase: a capital after a small letter starts a new word.
    if (ascii::is_upper(c) && prev != 0 && ascii::is_lower(prev)) {
      flush();
      current.glued = true;
    }
    if (current.text.empty()) current.capital = ascii::is_upper(c);
    if (ascii::is_lower(c)) current.upper = false;
    current.text += static_cast<char>(ascii::lower(c));
    prev = c;
  }
  flush();
  return out;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (auto& t : tokens(text)) out.push_back(std::move(t.text));
  return out;
}

class Stemmer {
 public:
  Stemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {}
  ~Stemmer() { sb_stemmer_delete(stemmer_); }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  std::string stem(const std::string& word) {
    if (stemmer_ == nullptr) return word;
    const sb_symbol* s = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
    if (s == nullptr) return word;
    return std::string(reinterpret_cast<const char*>(s),
                       static_cast<std::size_t>(sb_stemmer_length(stemmer_)));
  }

 private:
  sb_stemmer* stemmer_;
};

/// Words the stemmer cuts to the stem of an unrelated word, each given a stem of its own:
/// "animal", "anime" and "animation" all become "anim", "customer" becomes "custom",
/// "authorization" "author", "international" "intern", "parking" "park", "training" "train".
/// Only words whose two meanings are both common in what web APIs do are listed.
const std::unordered_map<std::string, std::string>& own_stems() {
  static const std::unordered_map<std::string, std::string> kStems = [] {
    const std::vector<std::pair<std::string, std::vector<std::string>>> groups = {
        {"animal", {"animal", "animals"}},
        {"animation", {"animation", "animations", "animated"}},
        {"anime", {"anime"}},
        {"attraction", {"attraction", "attractions"}},
        {"authority", {"authority", "authorities"}},
        {"authoriz",
         {"authorization", "authorizations", "authorisation", "authorisations", "authorize",
          "authorizes", "authorized", "authorizing", "authorise", "authorises", "authorised",
          "authorising"}},
        {"busy", {"busy", "busier", "busiest"}},
        {"capitalization", {"capitalization", "capitalisation"}},
        {"conversation", {"conversation", "conversations", "conversational"}},
        {"conversion", {"conversion", "conversions"}},
        {"customer", {"customer", "customers"}},
        {"dating", {"dating"}},
        {"department", {"department", "departments"}},
        {"direction", {"direction", "directions"}},
        {"edition", {"edition", "editions"}},
        {"escalator", {"escalator", "escalators"}},
        {"expensive", {"expensive"}},
        {"experience", {"experience", "experiences", "experienced"}},
        {"experiment", {"experiment", "experiments", "experimental", "experimentation"}},
        {"important", {"important"}},
        {"informal", {"informal"}},
        {"international", {"international", "internationally"}},
        {"journalism", {"journalism"}},
        {"likely", {"likely"}},
        {"localization",
         {"localization", "localisation", "localize", "localise", "localized", "localised",
          "localizes", "localises", "locale", "locales"}},
        {"officer", {"officer", "officers"}},
        {"organic", {"organic"}},
        {"organiz",
         {"organize", "organizes", "organized", "organizing", "organizer", "organizers"}},
        {"organization",
         {"organization", "organizations", "organisation", "organisations", "organizational"}},
        {"original", {"original", "originals"}},
        {"parking", {"parking"}},
        {"personality", {"personality", "personalities"}},
        {"physics", {"physics"}},
        {"position", {"position", "positions", "positioning"}},
        {"productivity", {"productivity"}},
        {"publication", {"publication", "publications"}},
        {"reservation", {"reservation", "reservations"}},
        {"securities", {"securities"}},
        {"several", {"several"}},
        {"severe", {"severe", "severity", "severities"}},
        {"spelling", {"spelling", "spellings", "spelled", "spelt", "spellcheck", "spellchecker"}},
        {"trained", {"trained", "pretrained"}},
        {"training", {"training", "trainings"}},
        {"university", {"university", "universities"}},
    };
    std::unordered_map<std::string, std::string> out;
    for (const auto& [stem, words] : groups) {
      for (const auto& w : words) out.emplace(w, stem);
    }
    return out;
  }();
  return kStems;
}

/// British spellings written the American way before stemming ("colour" color, "centre" center,
/// "licence" license, "catalogue" catalog, "optimise" optimize), so that a request and a
/// definition written on either side of the Atlantic meet: the stemmer keeps them apart.
const std::unordered_map<std::string, std::string>& american_spellings() {
  static const std::unordered_map<std::string, std::string> kWords = [] {
    std::unordered_map<std::string, std::string> out;
    const auto add = [&](const std::string& british, const std::string& american) {
      if (british != american) out.emplace(british, american);
    };
    // -our: colour, coloured, colours, colouring.
    for (const std::string base :
         {"colour", "flavour", "favour", "honour", "labour", "behaviour", "humour", "neighbour",
          "harbour", "rumour", "vapour", "savour", "armour", "endeavour", "odour", "parlour"}) {
      std::string us = base;
      us.erase(us.size() - 2, 1);  // "our" -> "or"
      for (const std::string end : {"", "s", "ed", "ing", "ite", "ites", "hood", "hoods"}) {
        add(base + end, us + end);
      }
    }
    // -re: centre, centres, centred.
    for (const std::string base : {"centre", "theatre", "metre", "litre", "fibre", "calibre",
                                   "spectre", "lustre", "kilometre", "centimetre", "millimetre"}) {
      const std::string stem = base.substr(0, base.size() - 2);
      add(base, stem + "er");
      add(base + "s", stem + "ers");
      add(stem + "red", stem + "ered");
    }
    // -ise, -isation: optimise, optimised, optimises, optimising, optimisation, optimiser.
    for (const std::string root :
         {"real",       "recogn",    "optim",   "summar",     "personal",   "local",   "visual",
          "synchron",   "categor",   "priorit", "final",      "initial",    "normal",  "serial",
          "sanit",      "token",     "util",    "standard",   "monet",      "digit",   "anonym",
          "custom",     "minim",     "maxim",   "emphas",     "apolog",     "memor",   "critic",
          "special",    "general",   "capital", "central",    "legal",      "harmon",  "modern",
          "mobil",      "stabil",    "steril",  "subsid",     "symbol",     "theor",   "vapor",
          "vandal",     "familiar",  "fertil",  "hospital",   "immun",      "item",    "jeopard",
          "magnet",     "material",  "metabol", "moistur",    "national",   "neutral", "patron",
          "penal",      "plagiar",   "polar",   "popular",    "privat",     "public",  "rational",
          "revolution", "scrutin",   "sensit",  "social",     "sympath",    "trivial", "urban",
          "computer",   "container", "virtual", "parametr",   "random",     "raster",  "vector",
          "organ",      "author",    "global",  "commercial", "industrial", "digital", "energ"}) {
      for (const auto& [uk, us] :
           std::initializer_list<std::pair<const char*, const char*>>{{"ise", "ize"},
                                                                      {"ised", "ized"},
                                                                      {"ises", "izes"},
                                                                      {"ising", "izing"},
                                                                      {"isation", "ization"},
                                                                      {"isations", "izations"},
                                                                      {"iser", "izer"},
                                                                      {"isers", "izers"}}) {
        add(root + uk, root + us);
      }
    }
    // -ogue: catalogue, catalogues.
    for (const std::string base : {"catalogue", "dialogue", "analogue", "monologue"}) {
      const std::string us = base.substr(0, base.size() - 2);
      add(base, us);
      add(base + "s", us + "s");
    }
    for (const auto& [uk, us] : std::initializer_list<std::pair<const char*, const char*>>{
             {"licence", "license"},
             {"licences", "licenses"},
             {"defence", "defense"},
             {"offence", "offense"},
             {"programme", "program"},
             {"programmes", "programs"},
             {"analyse", "analyze"},
             {"analysed", "analyzed"},
             {"analysing", "analyzing"},
             {"paralyse", "paralyze"},
             {"catalyse", "catalyze"},
             {"tyre", "tire"},
             {"tyres", "tires"},
             {"cheque", "check"},
             {"cheques", "checks"},
             {"jewellery", "jewelry"},
             {"grey", "gray"},
             {"aeroplane", "airplane"},
             {"aeroplanes", "airplanes"},
             {"aluminium", "aluminum"},
             {"mould", "mold"},
             {"plough", "plow"},
             {"pyjamas", "pajamas"},
             {"cosy", "cozy"},
             {"sceptical", "skeptical"},
             {"manoeuvre", "maneuver"},
             {"paediatric", "pediatric"},
             {"orthopaedic", "orthopedic"},
             {"encyclopaedia", "encyclopedia"},
             {"judgement", "judgment"},
             {"storey", "story"},
             {"storeys", "stories"},
             {"kerb", "curb"},
             {"draught", "draft"},
             {"speciality", "specialty"},
             {"yoghurt", "yogurt"},
             {"doughnut", "donut"},
             {"doughnuts", "donuts"},
             {"enquiry", "inquiry"},
             {"enquiries", "inquiries"},
             {"enquire", "inquire"},
             {"practise", "practice"},
             {"mum", "mom"},
             {"mums", "moms"}}) {
      add(uk, us);
    }
    return out;
  }();
  return kWords;
}

/// The stemmer is not thread-safe: one per thread, with a memo of the words it stemmed (an
/// index build stems the same few thousand words hundreds of thousands of times).
std::string stem(const std::string& given) {
  thread_local Stemmer stemmer;
  thread_local std::unordered_map<std::string, std::string> memo;
  // A request's word can be as long as its body: only words of a usual length are remembered.
  constexpr std::size_t kLongest = 32;
  if (given.size() > kLongest) return stemmer.stem(given);
  if (auto it = memo.find(given); it != memo.end()) return it->second;
  constexpr std::size_t kRemembered = 1 << 17;
  if (memo.size() >= kRemembered) memo.clear();
  const auto& american = american_spellings();
  const auto spelt = american.find(given);
  const std::string& word = spelt != american.end() ? spelt->second : given;
  const auto& own = own_stems();
  const auto it = own.find(word);
  return memo.emplace(given, it != own.end() ? it->second : stemmer.stem(word)).first->second;
}

/// Words that say when, not what: days, months, parts of the day. They count like names.
bool when_word(const std::string& w) {
  static const std::unordered_set<std::string> kWords = {
      "monday",   "tuesday",    "wednesday", "thursday", "friday",    "saturday", "sunday",
      "january",  "february",   "april",     "june",     "july",      "august",   "september",
      "october",  "november",   "december",  "today",    "tomorrow",  "tonight",  "yesterday",
      "now",      "weekend",    "weekday",   "morning",  "afternoon", "evening",  "mondays",
      "tuesdays", "wednesdays", "thursdays", "fridays",  "saturdays", "sundays",  "weekends"};
  return kWords.count(w) != 0;
}

/// Periods of time, which say when after a word of `when_before` ("this week", "next year").
/// Not "day" nor "hour": "on this day" names what a history service gives, "every hour" what an
/// hourly forecast does.
bool period_word(const std::string& w) {
  static const std::unordered_set<std::string> kWords = {
      "week",   "weeks",   "month",  "months", "year",   "years", "season", "quarter",
      "decade", "century", "spring", "summer", "autumn", "fall",  "winter", "night"};
  return kWords.count(w) != 0;
}

bool when_before(const std::string& w) {
  static const std::unordered_set<std::string> kWords = {"this",   "next", "last",    "every",
                                                         "coming", "past", "previous"};
  return kWords.count(w) != 0;
}

/// "a", "an", "the": never the first half of a word the registry writes as one.
bool article(const std::string& w) {
  return w == "a" || w == "an" || w == "the";
}

/// Words after which a word is a noun or an adjective ("a book", "my flight").
bool determiner(const std::string& w) {
  static const std::unordered_set<std::string> kWords = {
      "a",   "an",   "the",   "my",    "your",  "our",  "their", "his",    "her",
      "its", "this", "these", "those", "every", "each", "some",  "another"};
  return kWords.count(w) != 0;
}

/// Words after which "to" and a word make a verb ("how to spell", "want to book").
bool verb_before_to(const std::string& w) {
  static const std::unordered_set<std::string> kWords = {
      "how",  "want", "wants",  "need", "needs", "have", "has", "going",
      "like", "able", "trying", "try",  "where", "what", "way", "learn"};
  return kWords.count(w) != 0;
}

bool stop_word(const std::string& w) {
  return stop_words().count(w) != 0;
}

std::vector<std::string> terms(std::string_view text) {
  std::vector<std::string> out;
  for (auto& w : words(text)) {
    if (stop_word(w)) continue;
    out.push_back(stem(w));
  }
  return out;
}

/// A field's terms, and the parts of the names written in camelCase in it, which count
/// kNamePartShare each.
struct FieldTerms {
  std::vector<std::string> terms;
  std::vector<std::string> parts;
};

/// A definition's text's search terms: terms(), and a word written in camelCase once more as
/// one word ("Real-time status for GitHub": github too, as a request writes the name). The
/// parts of such a word that begins with a capital are a name's ("YouTube": you, tube), which
/// seldom says what the service does ("London tube", "book a table": Facebook): they count
/// less. An identifier's parts ("sendMessage") are words as any other.
FieldTerms text_terms(std::string_view text) {
  FieldTerms out;
  const auto toks = tokens(text);
  std::string joined;
  bool name = false;  // the camelCase run `joined` is, begun with a capital
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (!toks[i].glued) {
      joined.clear();
      name = toks[i].capital && i + 1 < toks.size() && toks[i + 1].glued;
    }
    if (!stop_word(toks[i].text)) (name ? out.parts : out.terms).push_back(stem(toks[i].text));
    joined += toks[i].text;
    const bool run_ends = i + 1 == toks.size() || !toks[i + 1].glued;
    if (run_ends && joined.size() > toks[i].text.size() && toks[i].glued) {
      out.terms.push_back(stem(joined));
    }
  }
  return out;
}

/// hearth's curated vocabulary (thesaurus.txt), its words and terms stemmed, and the lines it
/// skipped. Built once; the text is compiled in, and a unit test holds it free of malformed
/// lines (thesaurus_errors).
struct Curated {
  std::vector<std::string> errors;
  Thesaurus thesaurus;
  SpellingIndex word_keys;  ///< its one-word keys (stems), for misspellings of them
  /// The content words (stems) of its phrases, for a misspelt word of one ("oyther words").
  SpellingIndex phrase_words;
};
const Curated& curated_vocabulary() {
  static const Curated kCurated = [] {
    Curated c;
    c.thesaurus = Thesaurus::parse(
        kThesaurusText, [](std::string_view text) { return terms(text); }, &c.errors,
        [](std::string_view text) {
          std::vector<std::string> out;
          for (auto& w : words(text)) out.push_back(stem(w));
          return out;
        });
    std::vector<std::pair<std::string, std::uint32_t>> keys;
    for (auto& k : c.thesaurus.word_keys()) keys.emplace_back(std::move(k), 1);
    c.word_keys = SpellingIndex(std::move(keys));
    std::vector<std::pair<std::string, std::uint32_t>> phrase_words;
    for (auto& w : c.thesaurus.phrase_words()) {
      if (!stop_word(w)) phrase_words.emplace_back(std::move(w), 1);
    }
    c.phrase_words = SpellingIndex(std::move(phrase_words));
    return c;
  }();
  return kCurated;
}

/// What a word's stem or a phrase's stems expand to in the curated vocabulary.
const std::vector<std::string>* expansions(const std::string& key) {
  return curated_vocabulary().thesaurus.find(key);
}

/// What a quoted phrase of the curated vocabulary ("how far") expands to, by its words' stems.
const std::vector<std::string>* literal_expansions(const std::string& key) {
  return curated_vocabulary().thesaurus.find_literal(key);
}

void variable_text(const Variables& vars, std::string& out) {
  for (const auto& v : vars) {
    out += ' ';
    out += v.name;
    out += ' ';
    out += v.description;
  }
}

void example_text(const json::value& v, std::string& out) {
  if (v.is_string()) {
    out += ' ';
    out += v.get_string();
  } else if (v.is_array()) {
    for (const auto& item : v.get_array()) example_text(item, out);
  } else if (v.is_object()) {
    for (const auto& [key, item] : v.get_object()) {
      out += ' ';
      out += key;
      example_text(item, out);
    }
  }
}

/// The six fields' terms of one capability's document, and the camelCase names' parts of each
/// (FieldTerms).
struct Fields {
  std::vector<std::string> terms[kFields];
  std::vector<std::string> parts[kFields];
  /// A field's length, for its length normalisation: its terms and parts.
  std::size_t length(int field) const { return terms[field].size() + parts[field].size(); }
};

/// A service name as one word ("OpenWeatherMap" -> "openweathermap"), so a request that writes
/// it as one word finds it; empty when the name is a single word already.
std::string joined_name(std::string_view name) {
  const auto ws = words(name);
  if (ws.size() < 2) return {};
  std::string out;
  for (const auto& w : ws) out += w;
  return out;
}

Fields fields_of(const Capability& cap, const std::vector<std::string>& service_name,
                 const FieldTerms& service_description) {
  Fields f;
  auto cap_name = text_terms(cap.name);
  f.terms[kCapName] = std::move(cap_name.terms);
  f.parts[kCapName] = std::move(cap_name.parts);
  auto cap_description = text_terms(cap.description);
  f.terms[kCapDescription] = std::move(cap_description.terms);
  f.parts[kCapDescription] = std::move(cap_description.parts);
  f.terms[kServiceName] = service_name;
  f.terms[kServiceDescription] = service_description.terms;
  f.parts[kServiceDescription] = service_description.parts;
  std::string vars;
  variable_text(cap.input, vars);
  variable_text(cap.temp, vars);
  variable_text(cap.output, vars);
  f.terms[kVariables] = terms(vars);
  std::string examples;
  example_text(cap.examples, examples);
  f.terms[kExamples] = terms(examples);
  return f;
}

/// Whether a word is a word: one the registry's texts use, or a WordNet lemma.
/// Sorts `ids` and drops repeats.
void sort_unique(std::vector<std::uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

using IsWord = std::function<bool(const std::string&)>;

/// The two words a compound is written from ("weatherbit": weather, bit; "timezone": time,
/// zone): of lower-case letters only, split at the longest head for which both halves are words,
/// each at least 3 letters and one at least 4; nullopt when there is no such split.
std::optional<std::pair<std::string, std::string>> halves(const std::string& w,
                                                          const IsWord& is_word) {
  // Each cut copies and looks up both halves: a longer word is no compound of two words, and
  // would cost the square of its length.
  if (w.size() < 6 || w.size() > kLongestWord ||
      !std::all_of(w.begin(), w.end(), [](char c) { return ascii::is_lower(c); })) {
    return std::nullopt;
  }
  for (std::size_t cut = w.size() - 3; cut >= 3; --cut) {
    std::string head = w.substr(0, cut);
    std::string tail = w.substr(cut);
    if (std::max(head.size(), tail.size()) < 4) continue;
    if (is_word(head) && is_word(tail)) return std::pair{std::move(head), std::move(tail)};
  }
  return std::nullopt;
}

/// A service name's terms: its words', its joined form's, and the two halves of a compound
/// word in it ("Weatherbit": weather, bit; "Currencylayer": currency, layer), so a request's
/// "weather" finds the service its name describes.
std::vector<std::string> service_name_terms(const Definition& def, const IsWord& is_word) {
  std::vector<std::string> out;
  for (auto& w : words(def.service_name)) {
    if (stop_word(w)) continue;
    out.push_back(stem(w));
    if (!is_word || w.size() < 7 || is_word(w)) continue;
    if (const auto split = halves(w, is_word)) {
      if (!stop_word(split->first)) out.push_back(stem(split->first));
      if (!stop_word(split->second)) out.push_back(stem(split->second));
    }
  }
  if (auto joined = joined_name(def.service_name); !joined.empty()) out.push_back(stem(joined));
  return out;
}

/// The name's own words' terms (without the joined form).
std::vector<std::string> name_word_terms(const Definition& def) {
  return terms(def.service_name);
}

/// How a request's word reached a term, and what that is worth against the word itself.
enum class Via : std::uint8_t {
  kWord,
  kSpelling,
  kCurated,
  kSynonym,
  kSimilar,
  kDerived,
  kBroader,
  kNarrower,
  kGloss,
  kCooccurs,
  kJoined,
  kSplit
};

std::string_view via_name(Via via) {
  switch (via) {
    case Via::kWord:
      return "word";
    case Via::kSpelling:
      return "spelling";
    case Via::kCurated:
      return "synonym table";
    case Via::kSynonym:
      return "wordnet synonym";
    case Via::kSimilar:
      return "wordnet similar";
    case Via::kDerived:
      return "wordnet derived";
    case Via::kBroader:
      return "wordnet broader";
    case Via::kNarrower:
      return "wordnet narrower";
    case Via::kGloss:
      return "wordnet definition";
    case Via::kCooccurs:
      return "registry co-occurrence";
    case Via::kJoined:
      return "joined";
    case Via::kSplit:
      return "split";
  }
  return "word";
}

/// Whether an expansion says what its word means (rather than what it relates to: broader and
/// narrower words, a definition's words, co-occurrence).
bool close_via(Via via) {
  switch (via) {
    case Via::kBroader:
    case Via::kNarrower:
    case Via::kGloss:
    case Via::kCooccurs:
      return false;
    default:
      return true;
  }
}

Via via_of(Relation r) {
  switch (r) {
    case Relation::kSynonym:
      return Via::kSynonym;
    case Relation::kSimilar:
      return Via::kSimilar;
    case Relation::kDerived:
      return Via::kDerived;
    case Relation::kBroader:
      return Via::kBroader;
    case Relation::kNarrower:
      return Via::kNarrower;
    case Relation::kGloss:
      return Via::kGloss;
  }
  return Via::kSynonym;
}

/// What a related word counts, against 1 for the word itself: WordNet's relations by how close
/// they are, a sense's rank lowering it a little; a phrase's single words count less.
float relation_weight(const RelatedWord& r) {
  float w = 0;
  switch (r.relation) {
    case Relation::kSynonym:
      w = kSynonymWeight;
      break;
    case Relation::kSimilar:
    case Relation::kDerived:
      w = 0.45F;
      break;
    case Relation::kBroader:
      w = 0.4F;
      break;
    case Relation::kNarrower:
      w = 0.35F;
      break;
    case Relation::kGloss:
      w = 0.3F;
      break;
  }
  return r.sense == 0 ? w : w * 0.85F;
}

/// A place that holds a named place ("vienna": europe) counts this much of the name.
constexpr float kRegionWeight = 0.4F;
/// A service whose texts name only places other than the request's (a jobs board for Germany,
/// asked for jobs in Nairobi) keeps this much of its relevance.
constexpr float kElsewhereWeight = 0.6F;
/// A service of the request's place (of_place) matches the place's word this much of a word.
constexpr float kPlaceMatchWeight = 0.5F;
/// A name that is not the task counts this much of what it would.
constexpr float kNameWeight = 0.3F;
/// A name that names a service counts this much for that service: the request asks for it
/// ("upload files to Dropbox", where a file service's description says more of files).
constexpr float kNamedWeight = 1.5F;
/// Each word of a two-word name ("sao paulo") counts this much: the name is one thing.
constexpr float kTwoWordNameShare = 0.5F;
/// A word the registry has only as two words: each of them.
constexpr float kSplitWeight = 0.8F;
/// Spelling corrections by edits (none, one, two or more). A word no dictionary has, one edit
/// from a word, is that word as much as a word spelt right is itself ("tomrorow"); a word that
/// WordNet knows counts half of this (kKnownWordShare).
constexpr float kSpellingWeight[3] = {1.0F, 1.0F, 0.6F};
/// What a spelling correction keeps of its weight when an equally close word is one the registry
/// writes more often.
constexpr float kRarerCorrectionShare = 0.7F;
/// What a spelling correction or a split keeps of its weight when the request's word is one
/// WordNet knows: a real word is seldom a misspelling of another, or two words run together.
constexpr float kKnownWordShare = 0.5F;
/// Terms the registry uses with a word: their association (cosine of co-occurrence, <= 1)
/// times this.
constexpr float kCooccursWeight = 0.3F;
constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);
constexpr std::uint32_t kNoTerm = static_cast<std::uint32_t>(-1);
/// A word in the names of this many services, and of at least one in this many, is common to
/// names ("API"): a request names a service without it.
constexpr std::size_t kCommonNameWordAtLeast = 3;
constexpr std::size_t kCommonNameWordShare = 200;
/// Terms a word expands to, at most (the strongest kept), and the least an expansion must be
/// worth against the strongest term of its word.
constexpr std::size_t kExpansionsAtMost = 12;
constexpr float kExpansionFloor = 0.25F;

/// The word one letter off `second` (two neighbours swapped, or one left out) that makes a noun
/// of two words with `first` ("clinical trails": trials), or empty. Asked only after the first
/// word of such a noun.
std::string misread_compound(const WordNet& wordnet, std::string_view first,
                             std::string_view second) {
  std::string meant;
  if (second.size() < 4 || second.size() > kLongestWord || !wordnet.begins_compound(first)) {
    return meant;
  }
  std::string v;
  for (std::size_t i = 0; i + 1 < second.size() && meant.empty(); ++i) {
    v = second;
    std::swap(v[i], v[i + 1]);
    if (v != second && wordnet.is_compound(first, v)) meant = v;
  }
  for (std::size_t i = 0; i < second.size() && meant.empty(); ++i) {
    v = second;
    v.erase(i, 1);
    if (wordnet.is_compound(first, v)) meant = v;
  }
  return meant;
}

}  // namespace

struct SearchIndex::Impl {
  struct Posting {
    std::uint32_t doc;
    float weight;  ///< the term's saturated BM25F tf in the document (before idf)
  };
  struct Doc {
    std::uint32_t service;
    std::uint32_t capability;
  };
  struct Partner {
    std::uint32_t term;
    float association;
  };
  std::vector<std::shared_ptr<const Definition>> definitions;
  std::vector<Doc> docs;
  std::vector<std::uint32_t> first_doc;  ///< per service: its first document (they are in a row)
  std::unordered_map<std::string, std::uint32_t> vocabulary;
  std::vector<std::string> term_text;  ///< by term id
  std::vector<std::vector<Posting>> postings;
  std::vector<float> idf;
  double avg[kFields] = {};
  /// Per service, the terms of its name field (service_name_terms).
  std::vector<std::vector<std::string>> name_field;
  /// Per service, its name's terms and its joined name's (or kNone); per term, the services
  /// whose name has it.
  static constexpr std::uint32_t kNone = 0xffffffffU;
  std::vector<std::vector<std::uint32_t>> name_terms;
  std::vector<std::uint32_t> joined_term;

  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> named_by;
  /// Per service: its name's one word as written, lower case, stop words aside ("The Guardian":
  /// guardian; camelCase whole, "TheNews": thenews), or empty for a name of more words.
  std::vector<std::string> one_word_name;
  /// Per service (when WordNet is there): the places its texts name, and the places that hold
  /// those, as WordNet synset offsets, each sorted.
  struct Scope {
    std::vector<std::uint32_t> own;
    std::vector<std::uint32_t> held;
  };
  std::vector<Scope> scopes;
  std::vector<std::uint32_t> scoped;  ///< the services whose scope names a place
  /// Per term: the terms the registry's texts use with it most (strongest first).
  std::vector<std::vector<Partner>> partners;
  /// Surface words of the registry's texts, for spelling correction; their stems' term ids.
  SpellingIndex spelling;
  std::vector<std::uint32_t> spelling_term;
  const WordNet* wordnet = nullptr;

  /// What WordNet says of a word or phrase, for this registry: whether it is a lemma, whether
  /// it names a place or person, and its related words that are terms here, weighted. Looking
  /// it up reads a few dozen synsets, so it is remembered (bounded; a query's words repeat).
  struct Lexical {
    bool known = false;
    bool proper = false;    ///< a proper noun: a place, a person, a people, a language
    bool instance = false;  ///< one place or person: its relations are no use
    bool time = false;      ///< a word of time ("friday", "tonight"): says when, not what
    bool in_use = false;    ///< some sense seen in WordNet's tagged corpus (not "anna", a coin)
    std::vector<std::uint32_t> place;  ///< the place it names, then those that hold it
    std::vector<std::pair<std::uint32_t, std::pair<float, Relation>>> related;
    /// Of two words WordNet does not know together: the second's misreading that makes a noun
    /// of them ("clinical trails": trials; misread_compound), or empty.
    std::string misread;
  };
  /// What WordNet says of `word`, its related words taken from the senses in `parts` (a mask
  /// of WordNet::Parts) when it has any there; `capitals`: written in capitals throughout, from
  /// the senses WordNet writes so, if any (WordNet::related).
  std::shared_ptr<const Lexical> lexical(const std::string& word,
                                         unsigned parts = WordNet::kAnyPart,
                                         bool capitals = false) const;
  mutable std::shared_mutex lexical_mutex;
  mutable std::unordered_map<std::string, std::shared_ptr<const Lexical>> lexical_cache;

  struct Expansion {
    std::uint32_t term = 0;
    float weight = 0;
    Via via = Via::kWord;
    bool phrase = false;  ///< the meaning of a curated phrase the word is in
    /// The term a second step went through ("isbn": book, then reserve), or kNoTerm.
    std::uint32_t through = kNoTerm;
  };
  struct Group {
    std::string word;
    bool name = false;
    bool place = false;  ///< a place (Plan::places)
    bool time = false;   ///< says when ("monday", "next week"): names no service
    /// A name given for comparison ("shows like Breaking Bad"): a name, of no service asked for.
    bool example = false;
    /// What the group counts of a word's weight: half for each word of a two-word name ("sao
    /// paulo"), which names one thing.
    float share = 1.0F;
    std::vector<Expansion> terms;
  };
  struct Plan {
    std::vector<Group> groups;
    std::vector<std::uint32_t> named;   ///< services the request names, sorted
    std::vector<std::uint32_t> places;  ///< the places the request names, sorted
    std::vector<std::uint32_t> within;  ///< those and the places that hold them, sorted
  };

  const std::uint32_t* term_id(const std::string& t) const {
    auto it = vocabulary.find(t);
    return it == vocabulary.end() ? nullptr : &it->second;
  }

  Plan plan(std::string_view query) const;
  /// A word a misspelt word may stand for (dictionary_corrections), and whether it is met less
  /// often than the first of them.
  struct DictionaryWord {
    std::string word;
    bool rarer = false;
  };
  std::vector<DictionaryWord> dictionary_corrections(const std::string& word) const;
  static void add_expansion(std::vector<Expansion>& into, std::uint32_t term, float weight, Via via,
                            bool phrase = false, std::uint32_t through = kNoTerm) {
    for (auto& e : into) {
      if (e.term == term) {
        if (weight > e.weight) e = {term, weight, via, phrase, through};
        return;
      }
    }
    into.push_back({term, weight, via, phrase, through});
  }
  /// The place a word or two-word phrase names, then the places that hold it (WordNet::place).
  using Place = std::vector<PlacePart>;
  using PlaceOf = std::function<const Place&(const std::string&)>;

  /// The places a service's name, description and capabilities name, written with their
  /// capitals ("Tokyo", "Sao Paulo", "Canadian"), and those that hold them. Places with nothing
  /// in common within two steps (London and Tokyo, named as examples of time zones; both are in
  /// Eurasia) say the service works anywhere: no scope.
  static Scope scope_of(const Definition& def, const PlaceOf& place) {
    Scope scope;
    std::vector<const Place*> named;
    const auto scan = [&](std::string_view text) {
      const auto toks = tokens(text);
      for (std::size_t i = 0; i < toks.size(); ++i) {
        if (!toks[i].capital) continue;
        const Place* found = nullptr;
        if (i + 1 < toks.size() && toks[i + 1].capital) {
          found = &place(toks[i].text + ' ' + toks[i + 1].text);
          if (!found->empty()) ++i;
        }
        // (A word in capitals as written: a place's acronym names it so, "for the UK".)
        if (found == nullptr || found->empty()) {
          found = &place(toks[i].upper ? ascii::upper(toks[i].text) : toks[i].text);
        }
        if (found->empty()) continue;
        const bool seen = std::any_of(named.begin(), named.end(), [&](const Place* n) {
          return n->front().offset == found->front().offset;
        });
        if (!seen) named.push_back(found);
      }
    };
    scan(def.service_name);
    scan(def.service_description);
    for (const auto& cap : def.capabilities) {
      scan(cap.name);
      scan(cap.description);
    }
    if (named.empty()) return scope;
    const auto near = [](const Place* n) {
      std::vector<std::size_t> out;
      for (const auto& part : *n) {
        if (part.steps <= 2) out.push_back(part.offset);
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    std::vector<std::size_t> common = near(named.front());
    for (const Place* n : named) {
      const std::vector<std::size_t> mine = near(n);
      std::vector<std::size_t> both;
      std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
    if (common.empty()) return scope;
    for (const Place* n : named) {
      scope.own.push_back(static_cast<std::uint32_t>(n->front().offset));
      for (std::size_t k = 1; k < n->size(); ++k) {
        scope.held.push_back(static_cast<std::uint32_t>((*n)[k].offset));
      }
    }
    sort_unique(scope.own);
    sort_unique(scope.held);
    return scope;
  }

  /// Whether the request names a place and the service's texts name only others: none of them
  /// holds, or lies in, a place of the request's.
  bool elsewhere(const Plan& p, std::uint32_t service) const {
    if (p.places.empty() || service >= scopes.size() || scopes[service].own.empty()) return false;
    const Scope& s = scopes[service];
    const auto in = [](const std::vector<std::uint32_t>& set, std::uint32_t x) {
      return std::binary_search(set.begin(), set.end(), x);
    };
    for (const auto o : s.own) {
      if (in(p.within, o)) return false;
    }
    for (const auto h : s.held) {
      if (in(p.places, h)) return false;
    }
    return !in(p.named, service);
  }
  /// Whether the service's texts name a place of the request's, one that holds it, or one
  /// within it ("Transport for London" for "tube arrivals in London"; a service of the US for
  /// "in Texas").
  bool of_place(const Plan& p, std::uint32_t service) const {
    if (p.places.empty() || service >= scopes.size()) return false;
    const Scope& s = scopes[service];
    const auto in = [](const std::vector<std::uint32_t>& set, std::uint32_t x) {
      return std::binary_search(set.begin(), set.end(), x);
    };
    return std::any_of(s.own.begin(), s.own.end(), [&](auto o) { return in(p.within, o); }) ||
           std::any_of(s.held.begin(), s.held.end(), [&](auto h) { return in(p.places, h); });
  }
  /// What a group's match in a service's document counts: its share, times kNamedWeight for
  /// a name the service is named by and kNameWeight for one it is not.
  float factor(const Group& g, const Plan& p, std::uint32_t service) const {
    if (!g.name) return g.share;
    return g.share * (std::binary_search(p.named.begin(), p.named.end(), service) ? kNamedWeight
                                                                                  : kNameWeight);
  }
  /// The documents of the services of the request's places (of_place), into `out`.
  void docs_of_place(const Plan& p, std::vector<std::uint32_t>& out) const {
    for (const auto service : scoped) {
      if (!of_place(p, service)) continue;
      const auto begin = first_doc[service];
      const auto end =
          begin + static_cast<std::uint32_t>(definitions[service]->capabilities.size());
      for (auto doc = begin; doc < end; ++doc) out.push_back(doc);
    }
  }
  /// The idf of a place that `docs` documents' services name, as a term's.
  float place_idf(std::size_t docs_of_place) const {
    const auto n = static_cast<double>(docs.size());
    const auto df = static_cast<double>(docs_of_place);
    return static_cast<float>(std::log(1.0 + (n - df + 0.5) / (df + 0.5)));
  }
  std::vector<TermMatch> explain(const Plan& p, std::uint32_t doc) const;
};

SearchIndex::SearchIndex(std::vector<std::shared_ptr<const Definition>> definitions)
    : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.definitions = std::move(definitions);
  d.wordnet = WordNet::system();
  std::vector<Fields> fields;
  std::unordered_map<std::string, std::uint32_t> surface;  // word -> occurrences
  std::unordered_map<std::string, std::string> surface_stem;
  const auto count_surface = [&](std::string_view text) {
    for (auto& w : words(text)) {
      // A word past kLongestWord (an identifier, a key) is no spelling to correct toward; the
      // spelling index keeps the square of a word's length in deletions.
      if (stop_word(w) || w.size() < 3 || w.size() > kLongestWord) continue;
      ++surface[w];
    }
  };
  // The words the registry's texts use (for splitting compound names), then WordNet's.
  std::unordered_set<std::string> used;
  for (const auto& def : d.definitions) {
    for (auto& w : words(def->service_description)) used.insert(std::move(w));
    for (const auto& cap : def->capabilities) {
      for (auto& w : words(cap.name)) used.insert(std::move(w));
      for (auto& w : words(cap.description)) used.insert(std::move(w));
    }
  }
  std::unordered_map<std::string, bool> lemma;
  const IsWord is_word = [&](const std::string& w) {
    if (used.count(w) != 0) return true;
    if (d.wordnet == nullptr || w.size() < 4) return false;
    auto [it, fresh] = lemma.emplace(w, false);
    if (fresh) it->second = d.wordnet->known(w);
    return it->second;
  };
  for (std::uint32_t s = 0; s < d.definitions.size(); ++s) {
    const auto& def = *d.definitions[s];
    d.name_field.push_back(service_name_terms(def, is_word));
    const auto& service_name = d.name_field.back();
    const auto service_description = text_terms(def.service_description);
    count_surface(def.service_name);
    count_surface(def.service_description);
    d.first_doc.push_back(static_cast<std::uint32_t>(d.docs.size()));
    for (std::uint32_t c = 0; c < def.capabilities.size(); ++c) {
      const auto& cap = def.capabilities[c];
      count_surface(cap.name);
      count_surface(cap.description);
      fields.push_back(fields_of(cap, service_name, service_description));
      d.docs.push_back({s, c});
    }
  }
  for (const auto& f : fields) {
    for (int i = 0; i < kFields; ++i) d.avg[i] += static_cast<double>(f.length(i));
  }
  for (auto& a : d.avg) {
    a = fields.empty() ? 1.0 : std::max(1.0, a / static_cast<double>(fields.size()));
  }
  const auto intern = [&](const std::string& t) {
    auto [it, fresh] = d.vocabulary.emplace(t, static_cast<std::uint32_t>(d.postings.size()));
    if (fresh) {
      d.postings.emplace_back();
      d.term_text.push_back(t);
    }
    return it->second;
  };
  std::vector<std::uint32_t> df;
  for (std::uint32_t doc = 0; doc < fields.size(); ++doc) {
    std::unordered_map<std::uint32_t, float> tf;  // term -> BM25F pseudo term frequency
    for (int i = 0; i < kFields; ++i) {
      const auto& f = fields[doc];
      const float norm =
          1.0F - kB[i] + kB[i] * static_cast<float>(static_cast<double>(f.length(i)) / d.avg[i]);
      for (const auto& t : f.terms[i]) tf[intern(t)] += kWeights[i] / norm;
      for (const auto& t : f.parts[i]) tf[intern(t)] += kNamePartShare * kWeights[i] / norm;
    }
    df.resize(d.postings.size(), 0);
    for (const auto& [term, w] : tf) {
      d.postings[term].push_back({doc, w / (kK1 + w)});
      ++df[term];
    }
  }
  for (auto& p : d.postings) {
    std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.doc < b.doc; });
    p.shrink_to_fit();
  }
  const auto n = static_cast<double>(fields.size());
  d.idf.resize(df.size());
  for (std::size_t t = 0; t < df.size(); ++t) {
    d.idf[t] = static_cast<float>(std::log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)));
  }
  // The place a word names, asked of WordNet once per index (names here, scopes below).
  std::unordered_map<std::string, Impl::Place> known_places;
  const Impl::PlaceOf place = [&](const std::string& w) -> const Impl::Place& {
    auto [it, fresh] = known_places.try_emplace(w);
    if (fresh && w.size() >= 2 && d.wordnet != nullptr) it->second = d.wordnet->place(w);
    return it->second;
  };
  // Names, for "does the request name this service". A word many services' names share
  // ("API", "DB", "Network") does not tell them apart: "the bible" names "Bible API" without
  // it, unless the name has no other word.
  std::vector<std::vector<std::uint32_t>> name_ids(d.definitions.size());
  std::unordered_map<std::uint32_t, std::uint32_t> names_with;
  for (std::uint32_t s = 0; s < d.definitions.size(); ++s) {
    for (const auto& t : name_word_terms(*d.definitions[s])) {
      if (const auto* id = d.term_id(t)) name_ids[s].push_back(*id);
    }
    sort_unique(name_ids[s]);
    for (const auto id : name_ids[s]) ++names_with[id];
  }
  const auto common_name_word =
      std::max<std::size_t>(kCommonNameWordAtLeast, d.definitions.size() / kCommonNameWordShare);
  for (std::uint32_t s = 0; s < d.definitions.size(); ++s) {
    auto ids = std::move(name_ids[s]);
    for (const auto id : ids) d.named_by[id].push_back(s);
    std::vector<std::uint32_t> own = ids;
    std::erase_if(own, [&](std::uint32_t id) { return names_with[id] >= common_name_word; });
    // What is left must not be only places: "City, Berlin" is not named by "weather in Berlin",
    // nor "City, New York Open Data" by "weather in new york" (a place of two words).
    const auto only_places = [&] {
      if (d.wordnet == nullptr) return false;
      std::vector<std::uint32_t> places;
      const auto add = [&](std::vector<std::uint32_t>& into, const std::string& w) {
        if (const auto* id = d.term_id(stem(w))) into.push_back(*id);
      };
      const auto ws = words(d.definitions[s]->service_name);
      for (const auto& w : ws) {
        if (!place(w).empty()) add(places, w);
      }
      sort_unique(places);
      if (std::includes(places.begin(), places.end(), own.begin(), own.end())) return true;
      // A word left is perhaps part of a place of two words: asked only of such pairs.
      const auto left = [&](const std::string& w) {
        const auto* id = d.term_id(stem(w));
        return id != nullptr && std::binary_search(own.begin(), own.end(), *id) &&
               !std::binary_search(places.begin(), places.end(), *id);
      };
      std::vector<std::uint32_t> more = places;
      for (std::size_t i = 0; i + 1 < ws.size(); ++i) {
        if ((left(ws[i]) || left(ws[i + 1])) && !place(ws[i] + ' ' + ws[i + 1]).empty()) {
          add(more, ws[i]);
          add(more, ws[i + 1]);
        }
      }
      sort_unique(more);
      return std::includes(more.begin(), more.end(), own.begin(), own.end());
    };
    const bool shortened = !own.empty() && own.size() < ids.size() && !only_places();
    d.name_terms.push_back(shortened ? std::move(own) : std::move(ids));
    std::uint32_t joined = Impl::kNone;
    if (auto j = joined_name(d.definitions[s]->service_name); !j.empty()) {
      if (const auto* id = d.term_id(stem(j))) {
        joined = *id;
        d.named_by[joined].push_back(s);
      }
    }
    d.joined_term.push_back(joined);
    std::vector<std::string> name;
    for (auto& part : tokens(d.definitions[s]->service_name)) {
      if (part.glued && !name.empty()) {
        name.back() += part.text;
      } else {
        name.push_back(std::move(part.text));
      }
    }
    std::erase_if(name, [](const std::string& w) { return stop_word(w); });
    d.one_word_name.push_back(name.size() == 1 ? std::move(name.front()) : std::string());
  }
  // Co-occurrence across services: terms in 2 to a twentieth of the services (rarer ones say
  // nothing reliable, commoner ones relate to everything); partners used together at least
  // twice, by cosine.
  {
    const std::size_t services = d.definitions.size();
    const std::size_t most = std::max<std::size_t>(20, services / 20);
    std::vector<std::uint32_t> sdf(d.postings.size(), 0);
    std::vector<std::vector<std::uint32_t>> sets;
    sets.reserve(services);
    for (std::uint32_t svc = 0; svc < services; ++svc) {
      // A service's texts: its name and description, its capabilities' names and descriptions.
      std::vector<std::uint32_t> ids;
      const auto end =
          svc + 1 < services ? d.first_doc[svc + 1] : static_cast<std::uint32_t>(fields.size());
      for (auto doc = d.first_doc[svc]; doc < end; ++doc) {
        for (const int f : {kServiceName, kServiceDescription, kCapName, kCapDescription}) {
          for (const auto& t : fields[doc].terms[f]) ids.push_back(d.vocabulary.at(t));
        }
      }
      sort_unique(ids);
      for (const auto id : ids) ++sdf[id];
      sets.push_back(std::move(ids));
    }
    // Counted term by term over the services that have it, in one dense array: memory in
    // proportion to the vocabulary, not to the pairs.
    std::vector<std::vector<std::uint32_t>> having(d.postings.size());
    for (std::uint32_t svc = 0; svc < sets.size(); ++svc) {
      auto& ids = sets[svc];
      std::erase_if(ids, [&](std::uint32_t id) { return sdf[id] < 2 || sdf[id] > most; });
      for (const auto id : ids) having[id].push_back(svc);
    }
    d.partners.resize(d.postings.size());
    std::vector<std::uint32_t> together(d.postings.size(), 0);
    std::vector<std::uint32_t> touched;
    for (std::uint32_t a = 0; a < having.size(); ++a) {
      if (having[a].empty()) continue;
      for (const auto svc : having[a]) {
        for (const auto b : sets[svc]) {
          if (b == a) continue;
          if (together[b]++ == 0) touched.push_back(b);
        }
      }
      for (const auto b : touched) {
        const std::uint32_t count = together[b];
        together[b] = 0;
        if (count < 2) continue;
        const auto cosine =
            static_cast<float>(count / std::sqrt(static_cast<double>(sdf[a]) * sdf[b]));
        if (cosine >= 0.3F) d.partners[a].push_back({b, cosine});
      }
      touched.clear();
    }
    for (auto& p : d.partners) {
      std::sort(p.begin(), p.end(), [&](const Impl::Partner& x, const Impl::Partner& y) {
        if (x.association != y.association) return x.association > y.association;
        return x.term < y.term;
      });
      if (p.size() > 3) p.resize(3);
      p.shrink_to_fit();
    }
  }
  // Where each service works, as its texts say (Impl::scope_of).
  if (d.wordnet != nullptr) {
    d.scopes.reserve(d.definitions.size());
    for (const auto& def : d.definitions) {
      d.scopes.push_back(Impl::scope_of(*def, place));
      if (!d.scopes.back().own.empty()) {
        d.scoped.push_back(static_cast<std::uint32_t>(d.scopes.size() - 1));
      }
    }
  }
  // The spelling vocabulary: surface words whose stem is a term, and the lemmas WordNet has
  // for them ("prettifying": prettify), so that a misspelt lemma ("prettfy") is corrected to a
  // word whose stem the registry has; for a plural WordNet does not know, the word without its
  // "s" or "es" where the stem is the same ("favicons": favicon, so "fvicon" is one edit away).
  if (d.wordnet != nullptr) {
    std::vector<std::pair<std::string, std::uint32_t>> more;
    for (const auto& [w, count] : surface) {
      auto bases = d.wordnet->base_forms(w);
      if (bases.empty() && w.size() > 4 && w.back() == 's' && w[w.size() - 2] != 's') {
        bases.push_back(w.substr(0, w.size() - 1));
        if (w.ends_with("es")) bases.push_back(w.substr(0, w.size() - 2));
      }
      if (bases.empty()) continue;
      const std::string own = stem(w);
      for (const auto& base : bases) {
        if (base.size() < 3 || base.find('_') != std::string::npos || surface.count(base) != 0) {
          continue;
        }
        if (stem(base) == own) more.emplace_back(base, count);
      }
    }
    for (auto& [w, count] : more) surface.emplace(std::move(w), count);
  }
  std::vector<std::pair<std::string, std::uint32_t>> vocabulary;
  for (auto& [w, count] : surface) {
    if (d.term_id(stem(w)) != nullptr) vocabulary.emplace_back(w, count);
  }
  std::sort(vocabulary.begin(), vocabulary.end());
  for (const auto& [w, count] : vocabulary) d.spelling_term.push_back(*d.term_id(stem(w)));
  d.spelling = SpellingIndex(std::move(vocabulary));
}

SearchIndex::~SearchIndex() = default;

std::shared_ptr<const SearchIndex::Impl::Lexical> SearchIndex::Impl::lexical(
    const std::string& word, unsigned parts, bool capitals) const {
  // WordNet's longest lemma has 71 letters; a longer word (a request's words are the client's)
  // is none, and is neither looked up nor remembered.
  constexpr std::size_t kLongestLemma = 80;
  if (word.size() > kLongestLemma) {
    static const auto kNone = std::make_shared<const Lexical>();
    return kNone;
  }
  // A British spelling relates as the American one does (WordNet writes most words that way).
  const auto& american = american_spellings();
  if (auto it = american.find(word); it != american.end()) {
    return lexical(it->second, parts, capitals);
  }
  std::string key = word;
  if (parts != WordNet::kAnyPart) {
    key += '#';
    key += std::to_string(parts);
  }
  if (capitals) key += "#C";
  {
    const std::shared_lock lock(lexical_mutex);
    if (auto it = lexical_cache.find(key); it != lexical_cache.end()) return it->second;
  }
  auto lex = std::make_shared<Lexical>();
  lex->known = wordnet->known(word);
  if (const auto space = word.find(' ');
      !lex->known && space != std::string::npos && word.find(' ', space + 1) == std::string::npos) {
    lex->misread = misread_compound(*wordnet, std::string_view(word).substr(0, space),
                                    std::string_view(word).substr(space + 1));
  }
  if (lex->known) {
    lex->in_use = wordnet->in_use(word);
    lex->proper = wordnet->proper_noun(word);
    lex->instance = lex->proper && wordnet->names_instance(word);
    if (lex->proper) {
      for (const auto& part : wordnet->place(word)) {
        lex->place.push_back(static_cast<std::uint32_t>(part.offset));
      }
    }
  }
  // A named place or person, or a word of time ("thursday", "weekend"), says where or when,
  // not what: its relations (a person's trade, a weekday's "day") would only add noise; a
  // place keeps only the places that hold it (below).
  lex->time = when_word(word);
  if (lex->known && !lex->instance && !lex->time) {
    const auto own = words(word);
    std::unordered_map<std::uint32_t, std::pair<float, Relation>> best;
    for (const auto& r : wordnet->related(word, 4, parts, capitals)) {
      // A phrase counts by its head, its last word ("air pollution": pollution), a little less.
      const auto phrase = words(r.word);
      if (phrase.empty()) continue;
      const std::string& head = phrase.back();
      const float weight = relation_weight(r) * (phrase.size() > 1 ? 0.8F : 1.0F);
      if (stop_word(head) || std::find(own.begin(), own.end(), head) != own.end()) continue;
      const auto* id = term_id(stem(head));
      if (id == nullptr) continue;
      auto [it, fresh] = best.emplace(*id, std::make_pair(weight, r.relation));
      if (!fresh && weight > it->second.first) it->second = {weight, r.relation};
    }
    lex->related.assign(best.begin(), best.end());
  } else if (lex->instance && !lex->time) {
    // A named place is named by its other names too ("lisbon": Lisboa, "peking": Beijing), in
    // one word: the same place, and as much its name.
    if (!lex->place.empty()) {
      for (const auto& r : wordnet->related(word, 1, parts)) {
        if (r.relation != Relation::kSynonym || r.sense != 0 ||
            r.word.find(' ') != std::string::npos) {
          continue;
        }
        const auto* id = term_id(stem(r.word));
        if (id != nullptr) lex->related.push_back({*id, {1.0F, Relation::kSynonym}});
      }
    }
    // A named place reaches the places that hold it ("vienna": austria, europe), as broader
    // words: a service of the region serves the city. Names of more than one word ("united
    // kingdom") are left out: their last word alone says something else.
    for (const auto& region : wordnet->regions(word)) {
      if (region.find(' ') != std::string::npos) continue;
      const auto* id = term_id(stem(region));
      if (id == nullptr) continue;
      const bool seen = std::any_of(lex->related.begin(), lex->related.end(),
                                    [&](const auto& r) { return r.first == *id; });
      if (!seen) lex->related.push_back({*id, {kRegionWeight, Relation::kBroader}});
    }
  }
  std::sort(lex->related.begin(), lex->related.end(), [](const auto& a, const auto& b) {
    if (a.second.first != b.second.first) return a.second.first > b.second.first;
    return a.first < b.first;
  });
  constexpr std::size_t kRemembered = 1 << 16;
  const std::unique_lock lock(lexical_mutex);
  if (lexical_cache.size() >= kRemembered) lexical_cache.clear();
  return lexical_cache.emplace(std::move(key), std::move(lex)).first->second;
}

/// Words a misspelt `word` (one the registry has nothing close to) may stand for, at most
/// three, each with the same first letter (typing seldom misses it): the curated vocabulary's
/// words closest to it ("doggoo": doggo), then the WordNet lemmas one edit away (a letter left
/// out, added, changed, or two swapped), those its tagged corpus met most often first, and
/// none a kind of animal or plant it never met. A curated word is given as its stem. For a
/// word of at least 4 letters.
std::vector<SearchIndex::Impl::DictionaryWord> SearchIndex::Impl::dictionary_corrections(
    const std::string& word) const {
  constexpr std::size_t kShortest = 4;
  constexpr std::size_t kAtMost = 3;
  std::vector<DictionaryWord> out;
  if (word.size() < kShortest || word.size() > kLongestWord) return out;
  const auto& keys = curated_vocabulary().word_keys;
  for (const auto& c : keys.correct(stem(word), kAtMost)) {
    if (keys.word(c.word).front() == word.front()) out.push_back({keys.word(c.word)});
  }
  if (wordnet == nullptr || out.size() == kAtMost) return out;
  std::vector<std::string> candidates;
  std::string c;
  for (std::size_t i = 1; i <= word.size(); ++i) {
    for (char l = 'a'; l <= 'z'; ++l) {
      c = word;  // added
      c.insert(c.begin() + static_cast<std::ptrdiff_t>(i), l);
      if (wordnet->is_lemma(c)) candidates.push_back(c);
      if (i == word.size() || l == word[i]) continue;
      c = word;  // changed
      c[i] = l;
      if (wordnet->is_lemma(c)) candidates.push_back(c);
    }
    if (i == word.size()) break;
    c = word;  // left out
    c.erase(i, 1);
    if (wordnet->is_lemma(c)) candidates.push_back(c);
    if (i + 1 < word.size() && word[i] != word[i + 1]) {
      c = word;  // swapped
      std::swap(c[i], c[i + 1]);
      if (wordnet->is_lemma(c)) candidates.push_back(c);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // A kind of animal or plant WordNet's tagged corpus never met ("wheatear", a bird, one edit
  // from "wheaterr") is seldom what a mistyped word meant: most of its rare lemmas are such
  // kinds. Others it never met are kept, after those it did (below): the tagged corpus is small
  // and old, and misses common words ("sunrise", "blog").
  std::erase_if(candidates, [&](const std::string& w) {
    return !wordnet->in_use(w) && wordnet->names_organism(w);
  });
  // The words met most often first: "ssying" is "saying" before "spying" or "staying".
  std::vector<std::pair<std::uint32_t, std::string>> by_use;
  by_use.reserve(candidates.size());
  for (auto& cand : candidates) by_use.emplace_back(wordnet->frequency(cand), std::move(cand));
  std::stable_sort(by_use.begin(), by_use.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [uses, cand] : by_use) {
    if (out.size() == kAtMost) break;
    out.push_back({std::move(cand), uses < by_use.front().first});
  }
  return out;
}

SearchIndex::Impl::Plan SearchIndex::Impl::plan(std::string_view query) const {
  Plan p;
  auto toks = tokens(query);
  // A word written in camelCase that the registry has whole ("YouTube", "GitHub") is that one
  // word, not its parts ("tube"); one it does not have is read in parts ("sendMessage").
  for (std::size_t i = 0; i < toks.size(); ++i) {
    std::size_t end = i + 1;
    std::string whole = toks[i].text;
    while (end < toks.size() && toks[end].glued) whole += toks[end++].text;
    if (end == i + 1 || term_id(stem(whole)) == nullptr) continue;
    toks[i].text = std::move(whole);
    toks[i].upper = false;
    toks.erase(toks.begin() + static_cast<std::ptrdiff_t>(i + 1),
               toks.begin() + static_cast<std::ptrdiff_t>(end));
  }
  // A word no dictionary has, one edit from a stop word and from no word of the registry's, is
  // that stop word misspelt ("whhich bin": which bin, a curated phrase; "abotu"): read as it, it
  // makes the phrases and says the parts of speech it would.
  for (auto& tok : toks) {
    if (tok.text.size() < 4 || stop_word(tok.text) || spelling.contains(tok.text) ||
        std::any_of(tok.text.begin(), tok.text.end(), [](char c) { return !ascii::is_alpha(c); })) {
      continue;
    }
    const auto fixes = stop_word_spellings().correct(tok.text, 1);
    if (fixes.empty() || fixes.front().distance > 1) continue;
    const auto near = spelling.correct(tok.text, 1);
    if ((!near.empty() && near.front().distance <= 1) || expansions(stem(tok.text)) != nullptr ||
        (wordnet != nullptr && wordnet->known(tok.text))) {
      continue;
    }
    tok.text = stop_word_spellings().word(fixes.front().word);
  }
  std::unordered_set<std::string> seen;
  std::vector<std::string> own_stems;
  // Per content word, the stem its phrases are looked up by: its own, or for a misspelt word of
  // a curated phrase, the phrase's ("oyther words for happy": other).
  std::vector<std::string> phrase_stems;
  // Per group: the phrase's word (a stem) its word misspells, or empty.
  std::vector<std::string> misspelt_as;
  // A country's acronym written in capitals ("US", "UK") names it, even one whose lower case is
  // a stop word ("us"): per token, the place and those that hold it, as a named place's.
  std::vector<std::vector<std::uint32_t>> acronym(toks.size());
  // Each content word is a group; a pair of neighbouring words WordNet knows as a phrase
  // ("space station") adds its related words to the second's group.
  std::vector<std::size_t> content;
  for (std::size_t i = 0; i < toks.size(); ++i) {
    if (wordnet != nullptr && toks[i].upper && toks[i].text.size() >= 2 &&
        toks[i].text.size() <= 3) {
      for (const auto& part : wordnet->place(ascii::upper(toks[i].text))) {
        acronym[i].push_back(static_cast<std::uint32_t>(part.offset));
      }
    }
    if (!stop_word(toks[i].text) || !acronym[i].empty()) content.push_back(i);
  }
  const auto has_letter = [](const Token& t) {
    return std::any_of(t.text.begin(), t.text.end(), [](char c) { return ascii::is_alpha(c); });
  };
  // Every word in capitals: written with caps lock on, no word is an acronym for it.
  const bool all_upper = std::all_of(toks.begin(), toks.end(),
                                     [&](const Token& t) { return t.upper || !has_letter(t); });
  // A name given for comparison is not what the request asks for: the capitalised words after
  // "like", "than", "similar to" or "alternative(s) to" ("shows like Breaking Bad", "movies
  // similar to The Lord of the Rings", "alternatives to Dropbox") name no service; not after
  // a verb's "like" ("I like Netflix").
  std::vector<bool> example(toks.size(), false);
  for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
    const std::string& t = toks[i].text;
    const std::string* before = i > 0 ? &toks[i - 1].text : nullptr;
    const auto liker = [](const std::string& w) {
      return w == "i" || w == "you" || w == "we" || w == "they" || w == "would" || w == "really" ||
             w == "do" || w == "dont" || w == "does" || w == "doesnt";
    };
    const bool cue = (t == "like" && (before == nullptr || !liker(*before))) || t == "than" ||
                     (t == "to" && before != nullptr &&
                      (*before == "similar" || *before == "alternative" ||
                       *before == "alternatives" || *before == "comparable"));
    if (!cue) continue;
    // The capitalised run after it, its stop words inside ("The Lord of the Rings").
    for (std::size_t j = i + 1; j < toks.size(); ++j) {
      if (toks[j].capital) {
        example[j] = true;
      } else if (!(stop_word(toks[j].text) && j > i + 1 && j + 1 < toks.size() &&
                   toks[j + 1].capital)) {
        break;
      }
    }
  }
  // So is a service whose outage is asked about: the capitalised run before "down", "offline"
  // or "outage" ("is GitHub down?", "Slack outage") is what a status service watches.
  for (std::size_t i = 1; i < toks.size(); ++i) {
    const std::string& t = toks[i].text;
    if (t != "down" && t != "offline" && t != "outage" && t != "outages") continue;
    for (std::size_t j = i; j-- > 0 && toks[j].capital;) example[j] = true;
  }
  std::vector<std::size_t> group_of(content.size(), kNoGroup);  // per content word (or none)
  struct PhraseUse {
    const std::vector<std::string>* meaning;
    std::vector<std::size_t> groups;  ///< its words' groups, its last word's first
  };
  std::vector<PhraseUse> phrases;        // the curated phrases the request has
  std::vector<std::string> token_stems;  // every token's stem, stop words too (made when asked)
  constexpr std::size_t kDictionaryTriesAtMost = 4;
  std::size_t dictionary_tries = 0;  // words looked up in dictionary_corrections
  std::unordered_map<std::string, std::vector<DictionaryWord>> dictionary_of;  // their answers
  // A word's dictionary_corrections, looked up once; nullptr when the request has had its few.
  const auto dictionary_for = [&](const std::string& w) -> const std::vector<DictionaryWord>* {
    if (auto it = dictionary_of.find(w); it != dictionary_of.end()) return &it->second;
    if (dictionary_tries >= kDictionaryTriesAtMost) return nullptr;
    ++dictionary_tries;
    return &dictionary_of.emplace(w, dictionary_corrections(w)).first->second;
  };
  // A word that neither the registry, WordNet nor the curated vocabulary has, one edit from a
  // word of a curated phrase, is that word in the phrases it makes. `closest`: the registry's
  // words closest to `w`, made here if asked for and kept for the word's corrections.
  using Closest = std::optional<std::vector<SpellingIndex::Correction>>;
  const auto phrase_stem = [&](const std::string& w, const std::string& own, bool capital,
                               Closest& closest) {
    const auto& words = curated_vocabulary().phrase_words;
    if (w.size() < 4 || words.contains(own) || spelling.contains(w) || expansions(own) != nullptr ||
        std::any_of(w.begin(), w.end(), [](char c) { return ascii::is_digit(c); })) {
      return own;
    }
    // One edit from a phrase's word by stems ("shpooting": shoot); or, of the registry's words
    // closest to it, the first whose stem is one ("wods": mods or words, "word"); or, where the
    // registry has nothing that close, of the dictionary's words one edit away ("ssying":
    // saying, spying or staying, "say").
    std::string fix;
    bool unknown = false;  // WordNet was asked and does not have `w`
    if (const auto fixes = words.correct(own, 1); !fixes.empty() && fixes.front().distance <= 1) {
      fix = words.word(fixes.front().word);
    } else {
      if (!closest) closest = spelling.correct(w);
      for (const auto& c : *closest) {
        if (c.distance > 1) break;
        if (std::string s = stem(spelling.word(c.word)); words.contains(s)) {
          fix = std::move(s);
          break;
        }
      }
      if (closest->empty() && !capital) {
        if (wordnet != nullptr && wordnet->known(w)) return own;
        unknown = true;
        if (const auto* dictionary = dictionary_for(w)) {
          for (const auto& c : *dictionary) {
            if (std::string s = stem(c.word); words.contains(s)) {
              fix = std::move(s);
              break;
            }
          }
        }
      }
    }
    // (WordNet last: most words are one edit from no phrase's word.)
    if (fix.empty() || (!unknown && wordnet != nullptr && wordnet->known(w))) return own;
    return fix;
  };
  // A group's word names a place: `where`, the place and then those that hold it.
  const auto names_place = [&](Group& g, const std::vector<std::uint32_t>& where) {
    g.place = true;
    p.places.push_back(where.front());
    p.within.insert(p.within.end(), where.begin(), where.end());
  };
  for (std::size_t k = 0; k < content.size(); ++k) {
    const Token& tok = toks[content[k]];
    const std::string& w = tok.text;
    const std::string own = stem(w);
    own_stems.push_back(own);
    Closest closest;
    phrase_stems.push_back(phrase_stem(w, own, tok.capital, closest));
    if (!token_stems.empty()) token_stems[content[k]] = phrase_stems.back();
    if (!seen.insert(own).second) continue;
    misspelt_as.push_back(phrase_stems.back() != own ? phrase_stems.back() : std::string());
    group_of[k] = p.groups.size();
    Group g;
    g.word = w;
    g.example = example[content[k]];
    const std::uint32_t* id = term_id(own);
    if (id != nullptr) add_expansion(g.terms, *id, 1.0F, Via::kWord);
    // The curated vocabulary: the word, and the phrases it ends ("text to speech").
    const auto curated = [&](const std::vector<std::string>* more, float weight,
                             std::vector<Expansion>& into, bool phrase, Via via = Via::kCurated) {
      if (more == nullptr) return;
      for (const auto& e : *more) {
        if (const auto* eid = term_id(e); eid != nullptr && (id == nullptr || *eid != *id)) {
          add_expansion(into, *eid, weight, via, phrase);
        }
      }
    };
    curated(expansions(own), kCuratedWeight, g.terms, /*phrase=*/false);
    // Two neighbouring words the registry writes as one ("web hook": webhook, "back up": backup,
    // "sign in": signin, the second a stop word) are that word, at full weight, in the group of
    // each that is a content word. Only a word of the registry's texts counts (a service's name
    // joined, "newyork", is not one).
    const auto joined_term = [&](const std::string& joined) -> const std::uint32_t* {
      if (!spelling.contains(joined)) return nullptr;
      const auto* jid = term_id(stem(joined));
      return jid != nullptr && (id == nullptr || *jid != *id) ? jid : nullptr;
    };
    const std::size_t at = content[k];
    // (Not after an article: "a long document" is not "along", nor "a way" "away".)
    if (at > 0 && !article(toks[at - 1].text)) {
      if (const auto* jid = joined_term(toks[at - 1].text + w)) {
        add_expansion(g.terms, *jid, 1.0F, Via::kJoined);
        if (k > 0 && content[k - 1] + 1 == at && !p.groups.empty() &&
            p.groups.back().word == toks[at - 1].text) {
          add_expansion(p.groups.back().terms, *jid, 1.0F, Via::kJoined);
        }
      }
    }
    if (at + 1 < toks.size() && stop_word(toks[at + 1].text)) {
      if (const auto* jid = joined_term(w + toks[at + 1].text)) {
        add_expansion(g.terms, *jid, 1.0F, Via::kJoined);
      }
    }
    // A phrase's meaning is the request's in the groups of each of its words ("read later":
    // bookmark, in both; at kPhraseOtherWordsWeight in the others): a service matching one of the
    // words alone ("read") would otherwise outweigh one that says what the phrase means.
    const auto use_phrase = [&](const std::vector<std::string>* meaning, std::size_t from) {
      curated(meaning, kPhraseWeight, g.terms, /*phrase=*/true);
      PhraseUse use{.meaning = meaning, .groups = {group_of[k]}};
      for (std::size_t j = from; j < k; ++j) {
        // (A word's own term keeps its full weight: add_expansion keeps the higher.)
        if (group_of[j] != kNoGroup) {
          curated(meaning, kPhraseOtherWordsWeight, p.groups[group_of[j]].terms, /*phrase=*/true);
          use.groups.push_back(group_of[j]);
        }
      }
      phrases.push_back(std::move(use));
    };
    for (std::size_t n = 2; n <= Thesaurus::kLongest && n <= k + 1; ++n) {
      const auto* meaning = expansions(Thesaurus::key(std::span(phrase_stems).last(n)));
      if (meaning != nullptr) use_phrase(meaning, k + 1 - n);
    }
    bool idiom = false;  // the word is one of a quoted phrase's
    // A quoted phrase, its stop words included ("how cold", "things to do"), counts at its last
    // content word: the tokens from `first` to `last`, this word the last content word among
    // them.
    {
      const std::size_t next = k + 1 < content.size() ? content[k + 1] : toks.size();
      std::vector<std::string> stems;
      for (std::size_t first =
               at + 1 >= Thesaurus::kLongestLiteral ? at + 1 - Thesaurus::kLongestLiteral : 0;
           first <= at; ++first) {
        for (std::size_t last = std::max(at, first + 1);
             last < next && last < first + Thesaurus::kLongestLiteral; ++last) {
          if (token_stems.empty()) {
            for (const auto& t : toks) token_stems.push_back(stem(t.text));
            for (std::size_t j = 0; j < phrase_stems.size(); ++j) {
              token_stems[content[j]] = phrase_stems[j];
            }
          }
          stems.assign(token_stems.begin() + static_cast<std::ptrdiff_t>(first),
                       token_stems.begin() + static_cast<std::ptrdiff_t>(last + 1));
          const auto* meaning = literal_expansions(Thesaurus::key(stems));
          if (meaning == nullptr) continue;
          std::size_t from = k;  // the first content word in the phrase
          while (from > 0 && content[from - 1] >= first) --from;
          use_phrase(meaning, from);
          // The phrase is an idiom: its word means what the phrase does ("things to do" asks
          // for no service of "things"), and so does a misspelling of it.
          std::erase_if(g.terms, [](const Expansion& e) { return e.via == Via::kWord; });
          idiom = true;
        }
      }
    }
    const bool digits = std::all_of(w.begin(), w.end(), [](char c) { return ascii::is_digit(c); });
    // A word the registry has keeps only its close relations (synonyms, similar and derived
    // words); broader and narrower words and definitions are for a word it does not have
    // ("smog", "pizza"), where they are the only way in.
    // (A correction's relations come this way too, at its weight and as "spelling".)
    const auto relate = [&](const Lexical& lex, bool close_only, float scale = 1.0F,
                            std::optional<Via> as = std::nullopt) {
      for (const auto& [term, how] : lex.related) {
        const Via via = via_of(how.second);
        if (close_only && !lex.instance && !close_via(via)) continue;
        if (id == nullptr || term != *id) {
          add_expansion(g.terms, term, scale * how.first, as.value_or(via));
        }
      }
    };
    // The part of speech the request uses the word in, where its neighbours say: after a
    // determiner a noun or an adjective ("find a book"); first and before a determiner, or after
    // "how to", "want to" and the like, a verb ("book a table", "how to spell"). WordNet's
    // relations are then taken from those senses ("book": reserve only as a verb).
    unsigned parts = WordNet::kAnyPart;
    {
      const std::string* before = at > 0 ? &toks[at - 1].text : nullptr;
      const std::string* after = at + 1 < toks.size() ? &toks[at + 1].text : nullptr;
      if (before != nullptr && determiner(*before)) {
        parts = WordNet::kNoun | WordNet::kAdjective;
      } else if ((at == 0 && after != nullptr && determiner(*after)) ||
                 (before != nullptr && *before == "to" && at >= 2 &&
                  verb_before_to(toks[at - 2].text))) {
        parts = WordNet::kVerb;
      }
    }
    // A word of two letters or more in capitals throughout is an acronym ("RAM"), unless every
    // word of the request is (written with caps lock on).
    const bool capitals = tok.upper && w.size() >= 2 && has_letter(tok) && !all_upper;
    const auto lex = wordnet != nullptr ? lexical(w, parts, capitals) : nullptr;
    // A word WordNet knows is seldom a misspelling of another ("aloud" is not "cloud") or two
    // words run together ("outside" is not "out side"): corrections and splits count less.
    const bool known_word = lex != nullptr && lex->known;
    const float known_share = known_word ? kKnownWordShare : 1.0F;
    if (lex != nullptr && !digits && w.size() >= 3) {
      // A capitalised word WordNet does not know, or knows only in senses its tagged corpus
      // never met, is a brand or a name ("YouTube", "Safari", "Anna"); one in capitals
      // throughout is an acronym, often the task itself ("USD", "ISS"). Such a name's senses
      // (Anna: a coin) are not what the request means.
      const bool brand = tok.capital && !tok.upper && content[k] > 0 && !lex->in_use;
      // A period after "this", "next", "last" or "every" ("this week", "next month") says when,
      // as a weekday does; and so does that word before a period or a word of time ("next
      // friday", "last night"), which is no request for a service named "Next".
      // "March" is a month beside a day's number ("march 3", "3 march"); alone, a verb. ("may"
      // is a stop word.)
      const auto day_number = [&](std::size_t i) {
        const std::string& t = toks[i].text;
        return !t.empty() && t.size() <= 2 &&
               std::all_of(t.begin(), t.end(), [](char c) { return ascii::is_digit(c); });
      };
      const bool when = (period_word(w) && at > 0 && when_before(toks[at - 1].text)) ||
                        (when_before(w) && at + 1 < toks.size() &&
                         (period_word(toks[at + 1].text) || when_word(toks[at + 1].text))) ||
                        (w == "march" && ((at > 0 && day_number(at - 1)) ||
                                          (at + 1 < toks.size() && day_number(at + 1))));
      if (!brand && !when && acronym[at].empty()) relate(*lex, id != nullptr);
      bool proper_phrase = false;
      const std::vector<std::uint32_t>* where = &lex->place;
      if (k > 0 && content[k - 1] + 1 == content[k]) {
        const std::string& before = toks[content[k - 1]].text;
        std::string pair = before;
        pair += ' ';
        pair += w;
        const auto phrase = lexical(pair);
        if (phrase->known) {
          relate(*phrase, false);
        } else if (const std::string& meant = phrase->misread; !meant.empty()) {
          // A word spelt as another real word, where the two make a noun of WordNet's that
          // they do not as written ("clinical trails": clinical trials): that noun, and its
          // word, as a correction of it.
          std::string noun = before;
          noun += ' ';
          noun += meant;
          relate(*lexical(noun), false, 1.0F, Via::kSpelling);
          if (const auto* mid = term_id(stem(meant));
              mid != nullptr && (id == nullptr || *mid != *id)) {
            add_expansion(g.terms, *mid, kSpellingWeight[0], Via::kSpelling);
          }
        }
        // A place of two words ("sao paulo", "new york") is a name, both its words: neither
        // may be one alone ("paulo"), and "new" alone is no name.
        proper_phrase = phrase->proper;
        if (proper_phrase && !p.groups.empty() && p.groups.back().word == before) {
          p.groups.back().name = true;
          p.groups.back().share = g.share = kTwoWordNameShare;
        }
        if (!phrase->place.empty()) {  // "sao paulo", not "paulo"
          where = &phrase->place;
          if (!p.groups.empty() && p.groups.back().word == before) p.groups.back().place = true;
        }
      }
      if (!where->empty()) names_place(g, *where);
      g.name = lex->proper || lex->time || brand || proper_phrase || when;
      g.time = lex->time || when;
    }
    // A number says how many, which year or what size, not what is asked for: "50 quid" is no
    // request for a service of "up to 50 GB". It counts as a name does, as a name given for
    // comparison does.
    if (digits || g.example) g.name = true;
    if (!acronym[at].empty()) {
      g.name = true;
      names_place(g, acronym[at]);
    }
    if (id == nullptr && !g.terms.empty()) {
      // A word the registry does not have reached it through WordNet ("bucks": dollar); one
      // more step from the strongest of those terms, through the curated vocabulary and the
      // registry's co-occurrence (dollar: currency), at the product of the weights.
      std::vector<Expansion> first = g.terms;
      std::sort(first.begin(), first.end(),
                [](const Expansion& a, const Expansion& b) { return a.weight > b.weight; });
      if (first.size() > 3) first.resize(3);
      for (const auto& e : first) {
        if (const auto* more = expansions(term_text[e.term])) {
          for (const auto& m : *more) {
            if (const auto* mid = term_id(m)) {
              add_expansion(g.terms, *mid, e.weight * kCuratedWeight, Via::kCurated,
                            /*phrase=*/false, e.term);
            }
          }
        }
        for (const auto& partner : partners[e.term]) {
          add_expansion(g.terms, partner.term, e.weight * kCooccursWeight * partner.association,
                        Via::kCooccurs, /*phrase=*/false, e.term);
        }
      }
    }
    // A word the registry has only as two ("timezone": time zone, "zipcode": zip code) is those
    // two, each a little below the word itself.
    if (id == nullptr) {
      const auto registry_word = [&](const std::string& half) {
        return !stop_word(half) && spelling.contains(half) && term_id(stem(half)) != nullptr;
      };
      if (const auto split = halves(w, registry_word)) {
        const float weight = kSplitWeight * known_share;
        add_expansion(g.terms, *term_id(stem(split->first)), weight, Via::kSplit);
        add_expansion(g.terms, *term_id(stem(split->second)), weight, Via::kSplit);
      }
    }
    // A word nothing in the registry has, nor any word related to it, is perhaps misspelt; so
    // is one whose stem matched by chance but which neither the registry's texts nor WordNet
    // have as a word ("recipies" stems as "recipients" do). The corrections join the group.
    const bool stray = id != nullptr && !spelling.contains(w) && !known_word;
    // (A word of time spelt right is none: "march 3" is no misspelt "match".)
    if ((g.terms.empty() || stray || (!misspelt_as.back().empty() && !idiom)) && !digits &&
        !g.time) {
      // A misspelt word means what its correction means: the correction's own term, and what
      // the curated vocabulary and WordNet relate to it ("ppems": poem, poetry), at the
      // correction's weight.
      const auto means_as = [&](const std::string& word, float scale) {
        const std::string own_stem = stem(word);
        const auto* cid = term_id(own_stem);
        if (cid != nullptr) add_expansion(g.terms, *cid, scale, Via::kSpelling);
        curated(expansions(own_stem), scale * kCuratedWeight, g.terms, /*phrase=*/false,
                Via::kSpelling);
        if (wordnet == nullptr) return;
        const auto lx = lexical(word);
        if (!lx->instance && !lx->time) relate(*lx, cid != nullptr, scale, Via::kSpelling);
      };
      // A misspelt word of time or place is one still ("tomrorow", "bacelona"): it says when or
      // where, not what is asked for (as the word spelt right does, below).
      const auto kind_of = [&](const std::string& word) {
        if (wordnet == nullptr || known_word) return;
        const auto lx = lexical(word);
        if (lx->time) {
          g.name = g.time = true;
        } else if (lx->proper && !lx->place.empty()) {
          g.name = true;
          names_place(g, lx->place);
        }
      };
      if (!closest) closest = spelling.correct(w);
      const auto& corrections = *closest;
      if (!corrections.empty()) kind_of(spelling.word(corrections.front().word));
      for (const auto& c : corrections) {
        float weight = known_share * kSpellingWeight[std::min(c.distance, 2U)];
        // Of equally close words, one the registry writes less often than the closest is less
        // likely what was meant ("spce": space, not spec). (A curated phrase the word makes
        // says which it is, below.)
        if (spelling.frequency(c.word) < spelling.frequency(corrections.front().word) &&
            spelling_term[c.word] != spelling_term[corrections.front().word]) {
          weight *= kRarerCorrectionShare;
        }
        // (A lemma of the registry's inflected word is indexed under that word's term.)
        add_expansion(g.terms, spelling_term[c.word], weight, Via::kSpelling);
        means_as(spelling.word(c.word), weight);
      }
      // Nothing in the registry is that close: perhaps a misspelling of a word the registry
      // lacks but WordNet or the curated vocabulary have ("kirty": kitty, a cat).
      // (A few such words a request: each tries some 54 words a letter of it.)
      if (corrections.empty() && !known_word && !tok.capital) {
        if (const auto* dictionary = dictionary_for(w)) {
          if (!dictionary->empty()) kind_of(dictionary->front().word);
          for (const auto& c : *dictionary) {
            means_as(c.word, kSpellingWeight[1] * (c.rarer ? kRarerCorrectionShare : 1.0F));
          }
        }
      }
    }
    // Strongest first (by what each can add: idf times weight); an expansion worth under a
    // quarter of the strongest decides nothing but costs its whole posting list.
    const auto value = [&](const Expansion& e) { return idf[e.term] * e.weight; };
    std::sort(g.terms.begin(), g.terms.end(), [&](const Expansion& a, const Expansion& b) {
      if (a.via == Via::kWord || b.via == Via::kWord) {
        return a.via == Via::kWord && b.via != Via::kWord;
      }
      if (value(a) != value(b)) return value(a) > value(b);
      return a.term < b.term;
    });
    if (!g.terms.empty()) {
      const float strongest = value(g.terms.front());
      // Co-occurrence, a second step from a word the registry lacks, is weak by design and
      // kept: it only decides where nothing closer matched.
      std::erase_if(g.terms, [&](const Expansion& e) {
        return e.via != Via::kWord && e.via != Via::kCooccurs &&
               value(e) < kExpansionFloor * strongest;
      });
    }
    if (g.terms.size() > kExpansionsAtMost) g.terms.resize(kExpansionsAtMost);
    p.groups.push_back(std::move(g));
  }
  // One word of the request is one piece of evidence: another word's expansion to it ("video
  // games": game -> video; "basketball game": basketball -> game) would count it twice.
  // A misspelt word's correction in full is that word ("straming": stream), as much as a word
  // spelt right is its own term.
  {
    std::vector<std::pair<std::uint32_t, std::size_t>> word_terms;  // a word's term, its group
    for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
      const auto& g = p.groups[gi];
      if (!g.terms.empty() && g.terms.front().via == Via::kWord) {
        word_terms.emplace_back(g.terms.front().term, gi);
        continue;
      }
      for (const auto& e : g.terms) {
        if (e.via == Via::kSpelling && e.through == kNoTerm && e.weight >= kSpellingWeight[1]) {
          word_terms.emplace_back(e.term, gi);
        }
      }
    }
    std::sort(word_terms.begin(), word_terms.end());
    // Whether `t` is the term of a word other than group `gi`'s.
    const auto words_term = [&](std::uint32_t t, std::size_t gi) {
      auto it =
          std::lower_bound(word_terms.begin(), word_terms.end(), std::pair{t, std::size_t{0}});
      for (; it != word_terms.end() && it->first == t; ++it) {
        if (it->second != gi) return true;
      }
      return false;
    };
    // (Nor may a second step through another word's term: "find a book by isbn" would count
    // "book" again, as what the curated vocabulary and the registry relate to it.)
    for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
      std::erase_if(p.groups[gi].terms, [&](const Expansion& e) {
        return e.via != Via::kWord && e.via != Via::kJoined &&
               (words_term(e.term, gi) || (e.through != kNoTerm && words_term(e.through, gi)));
      });
    }
  }
  // A word of a curated phrase is spelt as the phrase has it: no correction of it counts
  // ("flip a coin": "flip", which the registry lacks, is no misspelt "slip").
  // (A misspelt word read as a phrase's word keeps its corrections: it is misspelt. The phrase
  // says which of its closest corrections it is: "stok prices" is "stock", not "stop" or a
  // "tok" of TikTok.)
  for (const auto& use : phrases) {
    for (const auto gi : use.groups) {
      if (misspelt_as[gi].empty()) {
        std::erase_if(p.groups[gi].terms,
                      [](const Expansion& e) { return e.via == Via::kSpelling; });
        continue;
      }
      const auto* meant = term_id(misspelt_as[gi]);
      if (meant == nullptr) continue;
      // (A correction is at kRarerCorrectionShare or more; what it relates to, less.)
      const auto correction = [](const Expansion& e) {
        return e.via == Via::kSpelling && e.weight >= kRarerCorrectionShare * kSpellingWeight[1];
      };
      std::erase_if(p.groups[gi].terms,
                    [&](const Expansion& e) { return correction(e) && e.term != *meant; });
      for (auto& e : p.groups[gi].terms) {
        if (correction(e) && e.term == *meant) e.weight = kSpellingWeight[1];
      }
    }
  }
  // A curated phrase's meaning counts in each of its words' groups, as what the words say
  // together. A term of it that one of its words reaches on its own ("big file": large, which
  // "big" means) is that word's evidence: in the other words' groups it would count again.
  for (const auto& use : phrases) {
    for (const auto& m : *use.meaning) {
      const auto* t = term_id(m);
      if (t == nullptr) continue;
      const auto own = [&](std::size_t gi) {
        return std::any_of(
            p.groups[gi].terms.begin(), p.groups[gi].terms.end(),
            [&](const Expansion& e) { return e.term == *t && !e.phrase && close_via(e.via); });
      };
      if (std::none_of(use.groups.begin(), use.groups.end(), own)) continue;
      for (const auto gi : use.groups) {
        std::erase_if(p.groups[gi].terms,
                      [&](const Expansion& e) { return e.term == *t && e.phrase; });
      }
    }
  }
  // A service's whole name written as neighbouring capitalised words, which the registry has as
  // one ("Hacker News": HackerNews; "Drop Box": Dropbox): the request names it, and those words
  // are its name.
  // (Nor a name of the services called by only some of its words: "News" is another service;
  // "Breaking Bad Quotes" is named by "Breaking Bad quotes" as before. Nor is it read so in a
  // request whose every word is capitalised, where capitals say nothing: "Currency Exchange
  // Rates Today".)
  std::vector<std::vector<std::uint32_t>> whole_name(p.groups.size());  // per group: its run's
  const bool title_case =
      std::all_of(content.begin(), content.end(), [&](std::size_t i) { return toks[i].capital; });
  for (std::size_t k = 0; !title_case && k < content.size(); ++k) {
    // A name given for comparison names no service (as below); nor does a word of time alone
    // ("Monday"), though it may begin a name ("Sunday Times").
    const Group* first = group_of[k] != kNoGroup ? &p.groups[group_of[k]] : nullptr;
    if (first != nullptr && first->example) continue;
    std::string joined;
    for (std::size_t j = k; j < content.size() && j < k + 4; ++j) {
      const Token& t = toks[content[j]];
      if (!t.capital || (j > k && content[j] != content[j - 1] + 1)) break;
      joined += t.text;
      // One capitalised word names only a service whose name is that word alone, stop words
      // aside ("from The Guardian"; not "my Word document", Word Cloud's first word), written
      // inside the request, and not in capitals throughout (an acronym).
      const bool one = j == k;
      if (one && (content[k] == 0 || t.upper || (first != nullptr && first->time))) continue;
      const auto* id = term_id(stem(joined));
      const auto it = id != nullptr ? named_by.find(*id) : named_by.end();
      if (it == named_by.end()) continue;
      bool named = false;
      for (const auto service : it->second) {
        const auto& own = name_terms[service];
        if (one) {
          if (one_word_name[service] != t.text) continue;
        } else if (joined_term[service] != *id && (own.size() != 1 || own.front() != *id)) {
          continue;
        }
        p.named.push_back(service);
        named = true;
      }
      std::vector<std::uint32_t> run;
      for (std::size_t i = k; named && i <= j; ++i) {
        if (group_of[i] == kNoGroup) continue;
        const auto& g = p.groups[group_of[i]];
        if (!g.terms.empty() && g.terms.front().via == Via::kWord) {
          run.push_back(g.terms.front().term);
        }
      }
      sort_unique(run);
      for (std::size_t i = k; named && i <= j; ++i) {
        if (group_of[i] == kNoGroup) continue;
        p.groups[group_of[i]].name = true;
        whole_name[group_of[i]] = run;
      }
    }
  }
  // The services the request names: every term of the service's name is a word of the request.
  // A word of time says when, even where a service is called by it ("open on monday" is no
  // request for Monday, a work planner).
  std::sort(own_stems.begin(), own_stems.end());
  for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
    const auto& g = p.groups[gi];
    if (!g.name || g.time || g.example || g.terms.empty() || g.terms.front().via != Via::kWord) {
      continue;
    }
    auto it = named_by.find(g.terms.front().term);
    if (it == named_by.end()) continue;
    for (const auto service : it->second) {
      bool all = !name_terms[service].empty();
      for (const auto t : whole_name[gi]) {
        all = all && std::find(name_terms[service].begin(), name_terms[service].end(), t) !=
                         name_terms[service].end();
      }
      for (const auto t : name_terms[service]) {
        all = all && std::binary_search(own_stems.begin(), own_stems.end(), term_text[t]);
      }
      const bool joined = joined_term[service] == g.terms.front().term;
      if (all || joined) p.named.push_back(service);
    }
  }
  for (auto* set : {&p.named, &p.places, &p.within}) sort_unique(*set);
  return p;
}

namespace {

/// Per-thread scratch space of a query, sized to the largest index queried on the thread, so a
/// query allocates nothing in proportion to the index (dense arrays, cleared through the lists of
/// what was touched).
struct Scratch {
  std::vector<float> score;             ///< per document
  std::vector<float> best;              ///< per document, within one query word
  std::vector<std::uint32_t> mark;      ///< per document: the word `best` belongs to
  std::vector<std::uint32_t> touched;   ///< documents with a score
  std::vector<float> service_score;     ///< per service
  std::vector<std::uint32_t> services;  ///< services with a score
  std::vector<std::uint8_t> away;       ///< per service: of another place than the request's
  std::vector<std::uint32_t> aways;     ///< services marked in `away`
  std::uint32_t word = 0;

  void fit(std::size_t docs, std::size_t service_count) {
    if (score.size() < docs) {
      score.assign(docs, 0.0F);
      best.assign(docs, 0.0F);
      mark.assign(docs, 0);
    }
    if (service_score.size() < service_count) {
      service_score.assign(service_count, 0.0F);
      away.assign(service_count, 0);
    }
  }
};

}  // namespace

std::vector<ServiceHit> SearchIndex::search(std::string_view query,
                                            const SearchOptions& options) const {
  const auto& d = *impl_;
  thread_local Scratch sc;
  sc.fit(d.docs.size(), d.definitions.size());
  const Impl::Plan plan = d.plan(query);
  // A capability's score for a group (a word of the request) is the best of the group's
  // terms, so expansions never add up past the word itself; the relevance is the sum over
  // groups divided by what a capability holding every word at full strength would get
  // (docs/a2s.md, "Search"). A word no capability has (a date, a city) cannot tell services
  // apart: it is left out of the ideal, so it does not lower every score alike.
  float ideal = 0;
  std::vector<std::uint32_t> group_docs;
  std::vector<std::uint32_t> place_docs;
  for (const auto& g : plan.groups) {
    ++sc.word;
    float share = 0;
    group_docs.clear();
    const float name_share = !g.name || !plan.named.empty() ? 1.0F : kNameWeight;
    // A place the request writes in a form no text can match, a country's acronym that is a
    // stop word in lower case ("US"), matches the services whose texts name it (of_place), at
    // kPlaceMatchWeight of a word that so many documents hold. (A place written as a word
    // matches as that word does, and by its other names: "lisbon", Lisboa.)
    place_docs.clear();
    if (g.place && g.terms.empty()) d.docs_of_place(plan, place_docs);
    const bool single = g.terms.size() == 1 && place_docs.empty();
    for (const auto& e : g.terms) {
      const float idf = d.idf[e.term] * e.weight;
      share = std::max(share, idf * name_share * g.share);
      for (const auto& p : d.postings[e.term]) {
        const float v =
            idf * p.weight * (g.name ? d.factor(g, plan, d.docs[p.doc].service) : g.share);
        if (single) {
          // One term: its value is the word's (no best-of-group needed).
          if (sc.score[p.doc] == 0.0F) sc.touched.push_back(p.doc);
          sc.score[p.doc] += v;
          continue;
        }
        if (sc.mark[p.doc] != sc.word) {
          sc.mark[p.doc] = sc.word;
          sc.best[p.doc] = v;
          group_docs.push_back(p.doc);
        } else if (v > sc.best[p.doc]) {
          sc.best[p.doc] = v;
        }
      }
    }
    if (!place_docs.empty()) {
      const float idf = d.place_idf(place_docs.size()) * kPlaceMatchWeight;
      share = std::max(share, idf * name_share * g.share);
      for (const auto doc : place_docs) {
        const float v = idf * d.factor(g, plan, d.docs[doc].service);
        if (sc.mark[doc] != sc.word) {
          sc.mark[doc] = sc.word;
          sc.best[doc] = v;
          group_docs.push_back(doc);
        } else if (v > sc.best[doc]) {
          sc.best[doc] = v;
        }
      }
    }
    for (const auto doc : group_docs) {
      if (sc.score[doc] == 0.0F) sc.touched.push_back(doc);
      sc.score[doc] += sc.best[doc];
    }
    ideal += share;
  }
  std::vector<ServiceHit> out;
  if (ideal > 0) {
    // Services of other places than the request's, marked once (few services name a place).
    if (!plan.places.empty()) {
      for (const auto service : d.scoped) {
        if (d.elsewhere(plan, service)) {
          sc.away[service] = 1;
          sc.aways.push_back(service);
        }
      }
    }
    const auto scaled = [&](std::uint32_t doc) {
      const double relevance = std::min(1.0, static_cast<double>(sc.score[doc] / ideal));
      return sc.away[d.docs[doc].service] != 0 ? relevance * kElsewhereWeight : relevance;
    };
    // A service's score is its best capability's.
    for (const auto doc : sc.touched) {
      const double relevance = scaled(doc);
      if (relevance <= 0 || relevance < options.min_score) continue;
      const auto service = d.docs[doc].service;
      if (sc.service_score[service] == 0.0F) sc.services.push_back(service);
      sc.service_score[service] =
          std::max(sc.service_score[service], static_cast<float>(relevance));
    }
    const auto by_score = [&](std::uint32_t a, std::uint32_t b) {
      if (sc.service_score[a] != sc.service_score[b]) {
        return sc.service_score[a] > sc.service_score[b];
      }
      return d.definitions[a]->service_name < d.definitions[b]->service_name;
    };
    const std::size_t keep = std::min(options.limit, sc.services.size());
    std::partial_sort(sc.services.begin(), sc.services.begin() + static_cast<std::ptrdiff_t>(keep),
                      sc.services.end(), by_score);
    for (std::size_t i = 0; i < keep; ++i) {
      const auto service = sc.services[i];
      ServiceHit hit;
      hit.definition = d.definitions[service];
      hit.score = sc.service_score[service];
      hit.elsewhere = options.explain && sc.away[service] != 0;
      const auto begin = d.first_doc[service];
      const auto end = begin + static_cast<std::uint32_t>(hit.definition->capabilities.size());
      for (auto doc = begin; doc < end; ++doc) {
        const double relevance = scaled(doc);
        if (relevance <= 0 || relevance < options.min_score) continue;
        CapabilityHit cap{d.docs[doc].capability, relevance, {}};
        if (options.explain) cap.matches = d.explain(plan, doc);
        hit.capabilities.push_back(std::move(cap));
      }
      auto& caps = hit.capabilities;
      std::sort(caps.begin(), caps.end(), [&](const CapabilityHit& a, const CapabilityHit& b) {
        if (a.score != b.score) return a.score > b.score;
        return hit.definition->capabilities[a.index].name <
               hit.definition->capabilities[b.index].name;
      });
      if (caps.size() > options.capabilities_limit) caps.resize(options.capabilities_limit);
      out.push_back(std::move(hit));
    }
  }
  // Leave the scratch space clean for the next query.
  for (const auto doc : sc.touched) sc.score[doc] = 0.0F;
  for (const auto service : sc.services) sc.service_score[service] = 0.0F;
  for (const auto service : sc.aways) sc.away[service] = 0;
  sc.aways.clear();
  sc.touched.clear();
  sc.services.clear();
  return out;
}

std::vector<TermMatch> SearchIndex::Impl::explain(const Plan& p, std::uint32_t doc) const {
  std::vector<TermMatch> out;
  const auto& def = *definitions[docs[doc].service];
  const Fields f = fields_of(def.capabilities[docs[doc].capability], name_field[docs[doc].service],
                             text_terms(def.service_description));
  for (const auto& g : p.groups) {
    // The group's term that counted for this document: the one of highest value.
    const Expansion* best = nullptr;
    float best_value = 0;
    for (const auto& e : g.terms) {
      const auto& list = postings[e.term];
      auto it = std::lower_bound(list.begin(), list.end(), doc,
                                 [](const Posting& x, std::uint32_t v) { return x.doc < v; });
      if (it == list.end() || it->doc != doc) continue;
      const float v = idf[e.term] * e.weight * it->weight;
      if (v > best_value) {
        best_value = v;
        best = &e;
      }
    }
    if (best == nullptr) {
      // A place no text can match as written ("US"), matched by the service's place.
      if (g.place && g.terms.empty() && of_place(p, docs[doc].service)) {
        std::vector<std::uint32_t> of;
        docs_of_place(p, of);
        TermMatch m;
        m.word = g.word;
        m.term = g.word;
        m.via = "place";
        const float fac = factor(g, p, docs[doc].service);
        m.weight = kPlaceMatchWeight * fac;
        m.idf = place_idf(of.size());
        m.score = m.idf * m.weight;
        out.push_back(std::move(m));
      }
      continue;
    }
    TermMatch m;
    m.word = g.word;
    m.term = term_text[best->term];
    m.via = std::string(via_name(best->via));
    const float fac = factor(g, p, docs[doc].service);
    m.weight = best->weight * fac;
    m.idf = idf[best->term];
    m.score = best_value * fac;
    double pieces[kFields] = {};
    double total = 0;
    for (int i = 0; i < kFields; ++i) {
      const double norm = 1.0 - kB[i] + kB[i] * (static_cast<double>(f.length(i)) / avg[i]);
      const auto count =
          static_cast<double>(std::count(f.terms[i].begin(), f.terms[i].end(), m.term)) +
          kNamePartShare *
              static_cast<double>(std::count(f.parts[i].begin(), f.parts[i].end(), m.term));
      pieces[i] = count * kWeights[i] / norm;
      total += pieces[i];
    }
    for (int i = 0; i < kFields; ++i) {
      m.fields[static_cast<std::size_t>(i)] = total > 0 ? m.score * pieces[i] / total : 0;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<QueryWord> SearchIndex::interpret(std::string_view query) const {
  const auto& d = *impl_;
  const auto plan = d.plan(query);
  std::vector<QueryWord> out;
  for (const auto& g : plan.groups) {
    QueryWord w;
    w.word = g.word;
    w.name = g.name;
    w.place = g.place;
    for (const auto& e : g.terms) {
      w.terms.push_back({d.term_text[e.term], std::string(via_name(e.via)), e.weight});
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::size_t SearchIndex::memory_bytes() const {
  const auto& d = *impl_;
  std::size_t bytes = sizeof(Impl) + d.docs.capacity() * sizeof(Impl::Doc) +
                      d.idf.capacity() * sizeof(float) +
                      d.postings.capacity() * sizeof(std::vector<Impl::Posting>);
  for (const auto& p : d.postings) bytes += p.capacity() * sizeof(Impl::Posting);
  for (const auto& p : d.partners) {
    bytes += p.capacity() * sizeof(Impl::Partner) + sizeof(std::vector<Impl::Partner>);
  }
  for (const auto& n : d.name_terms) {
    bytes += n.capacity() * sizeof(std::uint32_t) + sizeof(std::vector<std::uint32_t>);
  }
  for (const auto& w : d.one_word_name) bytes += sizeof(std::string) + w.capacity();
  for (const auto& [term, id] : d.vocabulary) {
    bytes += 2 * term.capacity() + sizeof(std::pair<const std::string, std::uint32_t>) + 16 +
             sizeof(std::string);
  }
  bytes += d.vocabulary.bucket_count() * sizeof(void*);
  bytes += d.spelling.memory_bytes() + d.spelling_term.capacity() * sizeof(std::uint32_t);
  for (const auto& s : d.scopes) {
    bytes += sizeof(Impl::Scope) + (s.own.capacity() + s.held.capacity()) * sizeof(std::uint32_t);
  }
  bytes += d.scoped.capacity() * sizeof(std::uint32_t);
  return bytes;
}

namespace {

double rounded(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

}  // namespace

json::value registry_response(const std::vector<ServiceHit>& hits) {
  json::array services;
  for (const auto& hit : hits) {
    const auto& def = *hit.definition;
    json::object s;
    s["name"] = def.service_name;
    s["description"] = def.service_description;
    s["domain"] = def.domain;
    s["version"] = def.version;
    s["relevance_score"] = rounded(hit.score);
    if (hit.elsewhere) s["elsewhere"] = true;
    json::array caps;
    const json::array* written = nullptr;
    if (const auto* c = json::member(def.document, "capabilities"); c != nullptr && c->is_array()) {
      written = &c->get_array();
    }
    for (const auto& ch : hit.capabilities) {
      const auto& cap = def.capabilities[ch.index];
      json::object c;
      c["name"] = cap.name;
      c["description"] = cap.description;
      c["relevance_score"] = rounded(ch.score);
      if (!ch.matches.empty()) c["matches"] = matches_json(ch.matches);
      const json::object* as_written = nullptr;
      if (written != nullptr && ch.index < written->size() && (*written)[ch.index].is_object()) {
        as_written = &(*written)[ch.index].get_object();
      }
      for (const char* key :
           {"requiredScopes", "inputVariables", "tempVariables", "outputVariables", "request"}) {
        if (as_written != nullptr) {
          if (const auto* v = as_written->if_contains(key)) c[key] = *v;
        }
      }
      caps.push_back(std::move(c));
    }
    s["relevant_capabilities"] = std::move(caps);
    services.push_back(std::move(s));
  }
  return json::object{{"services", std::move(services)}};
}

json::value query_explanation(const std::vector<QueryWord>& words) {
  json::array out;
  for (const auto& w : words) {
    json::array ts;
    for (const auto& t : w.terms) {
      ts.push_back(json::object{{"term", t.term}, {"via", t.via}, {"weight", rounded(t.weight)}});
    }
    json::object word{{"word", w.word}, {"name", w.name}, {"terms", std::move(ts)}};
    if (w.place) word["place"] = true;
    out.push_back(std::move(word));
  }
  return json::object{{"words", std::move(out)}};
}

json::value matches_json(const std::vector<TermMatch>& matches) {
  json::array out;
  for (const auto& m : matches) {
    json::object fields;
    for (std::size_t i = 0; i < kSearchFields.size(); ++i) {
      if (m.fields[i] > 0) fields[kSearchFields[i]] = rounded(m.fields[i]);
    }
    out.push_back(json::object{{"word", m.word},
                               {"term", m.term},
                               {"via", m.via},
                               {"weight", rounded(m.weight)},
                               {"idf", rounded(m.idf)},
                               {"score", rounded(m.score)},
                               {"fields", std::move(fields)}});
  }
  return out;
}

std::vector<std::string> thesaurus_errors() {
  return curated_vocabulary().errors;
}

}  // namespace hearth::a2s
