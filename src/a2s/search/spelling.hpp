#pragma once
/// Spelling correction over a fixed vocabulary by symmetric deletes (the idea of SymSpell): at
/// build, every word's deletions of up to two letters are indexed; a misspelt word's own
/// deletions then find every vocabulary word within the edit distance, each checked with the
/// real (optimal string alignment) distance. Queries cost a few dozen lookups, whatever the
/// vocabulary's size.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hearth::a2s {

class SpellingIndex {
 public:
  /// Longer vocabulary words are kept (contains()) but not indexed for correction: a word's
  /// deletions number the square of its length, and such a word is an identifier, not a word.
  static constexpr std::size_t kLongestWord = 64;

  SpellingIndex() = default;
  /// `words`: the vocabulary, sorted by word, each with how often it occurs (ties between equally
  /// close words go to the more frequent).
  explicit SpellingIndex(std::vector<std::pair<std::string, std::uint32_t>> words);

  struct Correction {
    std::uint32_t word = 0;  ///< into the vocabulary
    std::uint32_t distance = 0;
  };

  /// The vocabulary words closest to `word` (lower case), all at the same smallest distance,
  /// most frequent first, at most `limit`. Words of 3 letters or fewer get none; up to 7
  /// letters one edit is allowed, from 8 two. A word of the vocabulary gets none.
  std::vector<Correction> correct(std::string_view word, std::size_t limit = 3) const;

  /// The edits allowed for a word of this length.
  static std::uint32_t allowed(std::size_t length);

  const std::string& word(std::uint32_t id) const { return words_[id].first; }
  /// How often the vocabulary's word `id` occurs, as given.
  std::uint32_t frequency(std::uint32_t id) const { return words_[id].second; }
  /// Whether `word` is in the vocabulary.
  bool contains(std::string_view word) const;
  std::size_t memory_bytes() const;

 private:
  std::vector<std::pair<std::string, std::uint32_t>> words_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> deletes_;  ///< sorted by hash
  std::size_t longest_ = 0;                                       ///< the longest indexed word
};

}  // namespace hearth::a2s
