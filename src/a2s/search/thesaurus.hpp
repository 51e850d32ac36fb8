#pragma once
/// hearth's curated vocabulary for service search (thesaurus.txt, compiled in): what people
/// write ("bucks", "space station", "text to speech") and what service descriptions call it
/// ("dollar", "iss", "tts"). A request's words and phrases expand through it, weighted below
/// the words themselves (docs/a2s.md, "Search").

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hearth::a2s {

class Thesaurus {
 public:
  /// A text's search terms: its words, stop words left out, stemmed.
  using Terms = std::function<std::vector<std::string>(std::string_view)>;

  /// Reads the format of thesaurus.txt: `WORDS => TERMS` (comma-separated words or phrases of
  /// at most kLongest words), or `A, B, C` for words that mean the same, each expanding to the
  /// others; `#` starts a comment line. A phrase of WORDS in double quotes ("how far", "things
  /// to do") is read word for word, its stop words kept (`every_word`: a text's words stemmed,
  /// none left out), at most kLongestLiteral words of which one at least is no stop word. A
  /// malformed line is skipped and described in `errors` ("line 12: ...").
  static Thesaurus parse(std::string_view text, const Terms& terms,
                         std::vector<std::string>* errors = nullptr, const Terms& every_word = {});

  /// The terms a word or phrase expands to (its terms joined by one space, as `key` makes
  /// them), most specific first, or nullptr.
  const std::vector<std::string>* find(const std::string& key) const;
  /// The terms a quoted phrase expands to, by the key of its words, stop words included.
  const std::vector<std::string>* find_literal(const std::string& key) const;

  /// The keys of one word (a word's stem, not a phrase's), sorted.
  std::vector<std::string> word_keys() const;
  /// The words (stems) of the keys of more than one word, quoted phrases' included, sorted and
  /// each once.
  std::vector<std::string> phrase_words() const;
  /// `terms` joined by one space: a phrase's key.
  static std::string key(std::span<const std::string> terms);

  /// Words a phrase may have at most.
  static constexpr std::size_t kLongest = 3;
  /// Words a quoted phrase may have at most, its stop words counted.
  static constexpr std::size_t kLongestLiteral = 4;

  std::size_t size() const { return table_.size() + literal_.size(); }

 private:
  using Table = std::unordered_map<std::string, std::vector<std::string>>;
  static void add(Table& table, const std::vector<std::string>& from,
                  const std::vector<std::string>& to);
  Table table_;
  Table literal_;  ///< the quoted phrases, by the key of all their words
};

}  // namespace hearth::a2s
