#pragma once
/// A reader of WordNet 3.0's database files (Debian's `wordnet-base`, /usr/share/wordnet; the
/// format is wndb(5WN)): a word's base forms, its senses, and the words each sense relates to.
/// The files are mapped, not loaded: a lookup is a binary search in an index file and one line
/// read per synset, so opening costs ~1 ms and the search's memory does not grow by 28 MB.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::a2s {

/// How a related word relates to the word looked up, closest first.
enum class Relation : std::uint8_t {
  kSynonym,   ///< in the same synset ("smog" - "smogginess")
  kSimilar,   ///< an adjective's similar-to, pertainym or attribute
  kDerived,   ///< derivationally related ("translate" - "translation")
  kBroader,   ///< a hypernym ("smog" - "air pollution")
  kNarrower,  ///< a hyponym ("vehicle" - "car")
  kGloss,     ///< a content word of the sense's definition
};

std::string_view relation_name(Relation relation);

struct RelatedWord {
  std::string word;  ///< lower case; a phrase's words joined by spaces
  Relation relation = Relation::kSynonym;
  std::uint8_t sense = 0;  ///< the looked-up word's sense it came from, 0 = most frequent
};

/// A place WordNet::place reached: its synset's offset in data.noun (its identity), and how
/// many part-of steps it is from the place the word names.
struct PlacePart {
  std::size_t offset = 0;
  int steps = 0;
};

class WordNet {
 public:
  /// nullptr when `dir` lacks the database files.
  static std::unique_ptr<WordNet> open(const std::filesystem::path& dir);
  /// The system's copy, opened once: $HEARTH_WORDNET, else /usr/share/wordnet. nullptr when
  /// absent; search then works without WordNet's related terms.
  static const WordNet* system();

  ~WordNet();
  WordNet(const WordNet&) = delete;
  WordNet& operator=(const WordNet&) = delete;

  /// Whether `word` (lower case; a phrase with spaces) or one of its base forms is a lemma.
  bool known(std::string_view word) const;

  /// Whether `word` (lower case, one word) is itself a lemma, as it is written. Answered from
  /// a set of the lemmas' hashes made on first use (0.7 MB, some 25 ms), so that a spelling
  /// correction can try the hundreds of words one edit from a request's word; a hash that
  /// matches is confirmed in the index files.
  bool is_lemma(std::string_view word) const;
  /// Whether `word`, a lemma as the database writes it (lower case), is the first word of a
  /// noun of two words ("clinical": clinical trial). From a set of hashes made with is_lemma's
  /// (the two sets below 0.6 MB more), so a false answer costs one lookup.
  bool begins_compound(std::string_view word) const;
  /// Whether `first` and `second` (lower case) make a noun of two words, the second perhaps in
  /// the plural ("clinical", "trials"). From those sets too, each hit confirmed in the index.
  bool is_compound(std::string_view first, std::string_view second) const;

  /// The lemmas `word` is an inflected form of, in any part of speech, other than itself
  /// ("prettifying": prettify; "recipes": recipe; "went": go).
  std::vector<std::string> base_forms(std::string_view word) const;

  /// Whether some sense of `word` (any part of speech) was seen in the tagged corpus WordNet's
  /// sense counts come from: not so for rare words such as "anna" (a coin) or "safari", which a
  /// request writing them with a capital uses as names.
  bool in_use(std::string_view word) const;

  /// Whether the first noun sense of `word` is a kind of animal or plant ("wheatear", a bird).
  bool names_organism(std::string_view word) const;

  /// How often the senses of `word`'s base forms (any part of speech) were met in that tagged
  /// corpus (cntlist.rev): "saying" (as "say") far more than "spying". 0 without the file.
  std::uint32_t frequency(std::string_view word) const;

  /// Whether the most frequent noun sense of `word` is a proper noun, written with a capital in
  /// the database, and one of its capitalised senses a place, a river or mountain, a person, a
  /// people or a language ("phoenix", "paris", "german", "english"; not "calories", whose
  /// "Calorie" is a unit).
  bool proper_noun(std::string_view word) const;

  /// Whether the most frequent noun sense of `word` is an instance: one named place or person
  /// ("phoenix", "einstein"), not a kind ("german").
  bool names_instance(std::string_view word) const;

  /// The place `word` names and the places that hold it: the place itself first (0 steps),
  /// then breadth first up to `levels` steps along every part-of relation ("tokyo": Tokyo;
  /// Honshu, Japan; ... Asia). The adjective of a place stands for it ("canadian": Canada), and
  /// so does its acronym written in capitals ("UK", not "uk"; "US", not "us"). Empty when
  /// `word` names no place, or also names a language ("english", "java").
  std::vector<PlacePart> place(std::string_view word, int levels = 4) const;

  /// The places that hold the place `word` names, nearest first, up to `levels` steps along
  /// its most frequent sense's part-of relations ("vienna": austria, europe).
  std::vector<std::string> regions(std::string_view word, int levels = 3) const;

  /// Parts of speech, as a mask for `related`.
  enum Parts : unsigned {
    kNoun = 1U,
    kVerb = 2U,
    kAdjective = 4U,
    kAdverb = 8U,
    kAnyPart = 15U,
  };

  /// The words related to `word`'s first `senses` senses in each part of speech of `parts`,
  /// closest relation first; the word itself and its base forms are not included. When `word`
  /// has no sense in `parts`, its senses in every part of speech. `capitals`: the word was
  /// written in capitals throughout; if WordNet writes it so in some senses ("RAM", "AI"), only
  /// those senses, in any part of speech.
  std::vector<RelatedWord> related(std::string_view word, int senses = 4, unsigned parts = kAnyPart,
                                   bool capitals = false) const;

 private:
  struct Impl;
  explicit WordNet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::a2s
