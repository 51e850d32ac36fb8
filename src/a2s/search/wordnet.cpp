#include "a2s/search/wordnet.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace hearth::a2s {
namespace {

/// A read-only file mapped into memory.
class Mapped {
 public:
  Mapped() = default;
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  ~Mapped() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }

  bool open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && st.st_size > 0;
    if (ok) {
      void* p =
          ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      ok = p != MAP_FAILED;
      if (ok) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
    return ok;
  }

  std::string_view text() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

constexpr std::array<char, 4> kPos = {'n', 'v', 'a', 'r'};
constexpr std::array<std::string_view, 4> kPosName = {"noun", "verb", "adj", "adv"};
/// Lexicographer files of nouns (lexnames(5WN)) that hold names: languages, peoples and
/// organisations, places, rivers and mountains, people.
constexpr unsigned kNounCommunication = 10;
constexpr unsigned kNounGroup = 14;
constexpr unsigned kNounLocation = 15;
constexpr unsigned kNounObject = 17;
constexpr unsigned kNounPerson = 18;

/// The line of `file` that starts at or contains `at`.
std::string_view line_at(std::string_view file, std::size_t at) {
  const std::size_t end = file.find('\n', at);
  return file.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
}

/// The start of the first line of `file`, from `from` (a line's start) on, whose first word
/// (up to its first space) is not less than `key`, the lines being sorted by it; past the end
/// when there is none. A binary search over bytes.
std::size_t first_line_from(std::string_view file, std::size_t from, std::string_view key) {
  std::size_t lo = from;
  std::size_t hi = file.size();
  while (lo < hi) {
    // The line holding `mid`: it starts after the last newline before `mid` (lo is always a
    // line's start), so lo <= start <= mid < hi and each step shrinks the range.
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::size_t newline = mid > lo ? file.rfind('\n', mid - 1) : std::string_view::npos;
    const std::size_t start = newline == std::string_view::npos || newline < lo ? lo : newline + 1;
    const std::string_view line = line_at(file, start);
    if (line.substr(0, line.find(' ')) < key) {
      lo = start + line.size() + 1;
    } else {
      hi = start;
    }
  }
  return lo;
}

/// Splits on single spaces, skipping empty fields.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename T>
bool number(std::string_view text, T& out, int base = 10) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out, base);
  return ec == std::errc() && ptr == end;
}

/// A lemma as WordNet writes it: lower case, spaces as underscores.
std::string lemma_of(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c == ' ') c = '_';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// A synset word as search wants it: lower case, underscores as spaces, no adjective marker.
std::string word_of(std::string_view lemma) {
  if (const auto paren = lemma.find('('); paren != std::string_view::npos) {
    lemma = lemma.substr(0, paren);
  }
  std::string out(lemma);
  for (char& c : out) {
    if (c == '_') c = ' ';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

struct Synset {
  unsigned lex_file = 0;  ///< the lexicographer file: what kind of thing (15: noun.location)
  std::vector<std::string_view> words;
  struct Pointer {
    std::string_view symbol;
    std::size_t offset = 0;
    int pos = 0;          ///< into kPos
    unsigned target = 0;  ///< 0: the whole synset; else the target synset's word number
  };
  std::vector<Pointer> pointers;
  std::string_view gloss;
};

int pos_index(char c) {
  switch (c) {
    case 'n':
      return 0;
    case 'v':
      return 1;
    case 'a':
    case 's':
      return 2;
    case 'r':
      return 3;
    default:
      return -1;
  }
}

/// Parses one data line: `offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr... | gloss`.
bool parse_synset(std::string_view line, Synset& out) {
  const std::size_t bar = line.find(" | ");
  const auto f = fields(line.substr(0, bar));
  if (bar != std::string_view::npos) out.gloss = line.substr(bar + 3);
  if (f.size() < 4 || !number(f[1], out.lex_file)) return false;
  unsigned words = 0;
  if (!number(f[3], words, 16)) return false;
  std::size_t i = 4;
  for (unsigned w = 0; w < words && i + 1 < f.size(); ++w, i += 2) out.words.push_back(f[i]);
  unsigned pointers = 0;
  if (i >= f.size() || !number(f[i], pointers)) return false;
  ++i;
  for (unsigned p = 0; p < pointers && i + 3 < f.size(); ++p, i += 4) {
    Synset::Pointer ptr;
    ptr.symbol = f[i];
    if (!number(f[i + 1], ptr.offset) || f[i + 2].empty()) return false;
    ptr.pos = pos_index(f[i + 2][0]);
    const std::string_view st = f[i + 3];
    unsigned target = 0;
    if (st.size() == 4 && number(st.substr(2), target, 16)) ptr.target = target;
    if (ptr.pos >= 0) out.pointers.push_back(ptr);
  }
  return true;
}

/// The gloss's definition part (before the examples in quotes), as content words.
std::vector<std::string> gloss_words(std::string_view gloss) {
  static const std::unordered_set<std::string_view> kSkip = {
      "a",       "an",    "the",       "of",      "or",   "and",     "to",         "in",    "on",
      "for",     "by",    "with",      "as",      "at",   "from",    "that",       "which", "who",
      "is",      "are",   "be",        "it",      "its",  "into",    "used",       "use",   "one",
      "some",    "any",   "something", "someone", "not",  "usually", "especially", "etc",   "e.g",
      "such",    "being", "having",    "has",     "have", "made",    "make",       "other", "their",
      "this",    "than",  "more",      "most",    "very", "often",   "person",     "thing", "act",
      "process", "state", "quality",   "way",     "part"};
  if (const auto semi = gloss.find(';'); semi != std::string_view::npos) {
    gloss = gloss.substr(0, semi);
  }
  if (const auto quote = gloss.find('"'); quote != std::string_view::npos) {
    gloss = gloss.substr(0, quote);
  }
  std::vector<std::string> out;
  std::string current;
  const auto flush = [&] {
    if (current.size() > 2 && kSkip.count(current) == 0) out.push_back(current);
    current.clear();
  };
  for (const char c : gloss) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-') {
      current += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else {
      flush();
    }
  }
  flush();
  return out;
}

}  // namespace

std::string_view relation_name(Relation relation) {
  switch (relation) {
    case Relation::kSynonym:
      return "synonym";
    case Relation::kSimilar:
      return "similar";
    case Relation::kDerived:
      return "derived";
    case Relation::kBroader:
      return "broader";
    case Relation::kNarrower:
      return "narrower";
    case Relation::kGloss:
      return "definition";
  }
  return "related";
}

struct WordNet::Impl {
  std::array<Mapped, 4> index;
  std::array<Mapped, 4> data;
  Mapped counts;  ///< cntlist.rev: "sense_key sense_number tag_cnt" lines, by sense key
  std::array<std::size_t, 4> first_line{};  ///< past the licence lines
  std::array<std::unordered_map<std::string, std::vector<std::string>>, 4> exceptions;
  /// is_lemma's set: the hashes of the one-word lemmas, sorted; made once, on first use.
  mutable std::once_flag lemma_hashes_made;
  mutable std::vector<std::size_t> lemma_hashes;
  /// begins_compound's and is_compound's sets: the hashes of the first words of two-word
  /// nouns, and of those nouns, sorted; made with is_lemma's.
  mutable std::vector<std::size_t> compound_firsts;
  mutable std::vector<std::size_t> compounds;

  /// Makes the three sets, once.
  void make_lemma_hashes() const {
    std::call_once(lemma_hashes_made, [this] {
      for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
        const std::string_view file = index[p].text();
        for (std::size_t at = first_line[p]; at < file.size();) {
          const std::string_view line = line_at(file, at);
          const std::string_view head = line.substr(0, line.find(' '));
          const std::size_t cut = head.find('_');
          if (cut == std::string_view::npos) {
            lemma_hashes.push_back(std::hash<std::string_view>{}(head));
          } else if (p == 0 && head.find('_', cut + 1) == std::string_view::npos) {
            compound_firsts.push_back(std::hash<std::string_view>{}(head.substr(0, cut)));
            compounds.push_back(std::hash<std::string_view>{}(head));
          }
          at += line.size() + 1;
        }
      }
      for (auto* set : {&lemma_hashes, &compound_firsts, &compounds}) {
        std::sort(set->begin(), set->end());
        set->erase(std::unique(set->begin(), set->end()), set->end());
        set->shrink_to_fit();
      }
    });
  }

  /// The index line of `lemma` in part of speech `pos`, or empty.
  std::string_view find(int pos, std::string_view lemma) const {
    const std::string_view file = index[pos].text();
    const std::size_t at = first_line_from(file, first_line[pos], lemma);
    if (at >= file.size()) return {};
    const std::string_view line = line_at(file, at);
    return line.substr(0, line.find(' ')) == lemma ? line : std::string_view();
  }

  /// The base forms of `lemma` in `pos` that are in the index (wnintro's morphy: the exception
  /// list, then the detachment rules).
  std::vector<std::string> base_forms(int pos, const std::string& lemma) const {
    return forms(pos, lemma, [&](const std::string& form) { return !find(pos, form).empty(); });
  }

  /// The forms morphy makes of `lemma` in `pos` for which `is_lemma` holds.
  template <class IsLemma>
  std::vector<std::string> forms(int pos, const std::string& lemma, const IsLemma& is_lemma) const {
    std::vector<std::string> out;
    const auto add = [&](const std::string& form) {
      if (form.empty()) return;
      for (const auto& seen : out) {
        if (seen == form) return;
      }
      if (is_lemma(form)) out.push_back(form);
    };
    add(lemma);
    if (auto it = exceptions[pos].find(lemma); it != exceptions[pos].end()) {
      for (const auto& base : it->second) add(base);
    }
    struct Rule {
      std::string_view suffix;
      std::string_view ending;
    };
    static constexpr Rule kNoun[] = {{"s", ""},      {"ses", "s"},   {"xes", "x"},   {"zes", "z"},
                                     {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
    static constexpr Rule kVerb[] = {{"s", ""},   {"ies", "y"}, {"es", "e"},  {"es", ""},
                                     {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};
    static constexpr Rule kAdj[] = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};
    const auto apply = [&](const auto& rules) {
      for (const Rule& r : rules) {
        // A base of fewer than 3 letters is a symbol more often than a word ("sms" is not
        // samarium's "sm").
        if (lemma.size() >= r.suffix.size() + 3 && lemma.ends_with(r.suffix)) {
          add(lemma.substr(0, lemma.size() - r.suffix.size()) + std::string(r.ending));
        }
      }
    };
    if (pos == 0) apply(kNoun);
    if (pos == 1) apply(kVerb);
    if (pos == 2) apply(kAdj);
    return out;
  }

  bool synset(int pos, std::size_t offset, Synset& out) const {
    const std::string_view file = data[pos].text();
    if (offset >= file.size()) return false;
    return parse_synset(line_at(file, offset), out);
  }

  /// The most frequent sense of `lemma` (or of its first base form that has one) in `pos`:
  /// that base form and the sense's synset.
  bool first_sense(int pos, const std::string& lemma, std::string& base, Synset& out) const {
    for (auto& form : base_forms(pos, lemma)) {
      const auto senses = offsets(find(pos, form));
      if (senses.empty() || !synset(pos, senses.front(), out)) continue;
      base = std::move(form);
      return true;
    }
    return false;
  }

  /// The noun synsets `start` is part of, breadth first up to `levels` steps, after `start`
  /// itself (0 steps): along every part-of relation (`every`: Tokyo is part of both Honshu and
  /// Japan), or only each synset's first (Vienna, Austria, Europe, Eurasia; not also the West).
  std::vector<PlacePart> wholes(std::size_t start, int levels, bool every) const {
    std::vector<PlacePart> out{{start, 0}};
    std::size_t level_start = 0;
    for (int level = 1; level <= levels && level_start < out.size(); ++level) {
      const std::size_t level_end = out.size();
      for (std::size_t i = level_start; i < level_end; ++i) {
        Synset s;
        if (!synset(0, out[i].offset, s)) continue;
        for (const auto& ptr : s.pointers) {
          if (ptr.symbol != "#p" || ptr.pos != 0) continue;
          const bool seen = std::any_of(out.begin(), out.end(),
                                        [&](const PlacePart& p) { return p.offset == ptr.offset; });
          if (!seen) out.push_back({ptr.offset, level});
          if (!every) break;
        }
      }
      level_start = level_end;
    }
    return out;
  }

  /// Where an index line's sense counts are among its fields (after the pointer symbols), 0 when
  /// the line is malformed: lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...
  static std::size_t sense_counts_at(const std::vector<std::string_view>& f) {
    std::size_t pointers = 0;
    if (f.size() < 4 || !number(f[3], pointers) || f.size() < 6 + pointers) return 0;
    return 4 + pointers;
  }

  /// The synset offsets of an index line, in sense order.
  static std::vector<std::size_t> offsets(std::string_view line) {
    const auto f = fields(line);
    std::vector<std::size_t> out;
    std::size_t count = 0;
    const std::size_t at = sense_counts_at(f);
    if (at == 0 || !number(f[2], count)) return out;
    for (std::size_t i = at + 2; i < f.size() && out.size() < count; ++i) {
      std::size_t offset = 0;
      if (number(f[i], offset)) out.push_back(offset);
    }
    return out;
  }
};

WordNet::WordNet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WordNet::~WordNet() = default;

std::unique_ptr<WordNet> WordNet::open(const std::filesystem::path& dir) {
  auto impl = std::make_unique<Impl>();
  for (std::size_t p = 0; p < kPos.size(); ++p) {
    const std::string name(kPosName[p]);
    if (!impl->index[p].open(dir / ("index." + name)) ||
        !impl->data[p].open(dir / ("data." + name))) {
      return nullptr;
    }
    // Licence lines start with a space; the index proper starts after them.
    const std::string_view file = impl->index[p].text();
    std::size_t at = 0;
    while (at < file.size() && file[at] == ' ') {
      const std::size_t end = file.find('\n', at);
      at = end == std::string_view::npos ? file.size() : end + 1;
    }
    impl->first_line[p] = at;
    // (Sense counts are optional: without them every word's frequency is 0.)
    if (p == 0) impl->counts.open(dir / "cntlist.rev");
    std::ifstream exc(dir / (name + ".exc"));
    std::string line;
    while (std::getline(exc, line)) {
      const auto f = fields(line);
      if (f.size() < 2) continue;
      auto& bases = impl->exceptions[p][std::string(f[0])];
      for (std::size_t i = 1; i < f.size(); ++i) bases.emplace_back(f[i]);
    }
  }
  return std::unique_ptr<WordNet>(new WordNet(std::move(impl)));
}

const WordNet* WordNet::system() {
  static const std::unique_ptr<WordNet> kSystem = [] {
    const char* env = std::getenv("HEARTH_WORDNET");
    return open(env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                               : std::filesystem::path("/usr/share/wordnet"));
  }();
  return kSystem.get();
}

bool WordNet::known(std::string_view word) const {
  const std::string lemma = lemma_of(word);
  for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
    if (!impl_->base_forms(p, lemma).empty()) return true;
  }
  return false;
}

bool WordNet::begins_compound(std::string_view word) const {
  impl_->make_lemma_hashes();
  return std::binary_search(impl_->compound_firsts.begin(), impl_->compound_firsts.end(),
                            std::hash<std::string_view>{}(word));
}

bool WordNet::is_compound(std::string_view first, std::string_view second) const {
  impl_->make_lemma_hashes();
  std::string lemma(first);
  lemma += '_';
  lemma += second;
  // Its plural too ("trials"): morphy's noun forms, each asked of the set before the index.
  return !impl_
              ->forms(0, lemma,
                      [&](const std::string& form) {
                        return std::binary_search(impl_->compounds.begin(), impl_->compounds.end(),
                                                  std::hash<std::string_view>{}(form)) &&
                               !impl_->find(0, form).empty();
                      })
              .empty();
}

bool WordNet::is_lemma(std::string_view word) const {
  impl_->make_lemma_hashes();
  if (!std::binary_search(impl_->lemma_hashes.begin(), impl_->lemma_hashes.end(),
                          std::hash<std::string_view>{}(word))) {
    return false;
  }
  const std::string lemma = lemma_of(word);
  for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
    if (!impl_->find(p, lemma).empty()) return true;
  }
  return false;
}

std::vector<std::string> WordNet::base_forms(std::string_view word) const {
  const std::string lemma = lemma_of(word);
  std::vector<std::string> out;
  for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
    for (auto& form : impl_->base_forms(p, lemma)) {
      if (form != lemma && std::find(out.begin(), out.end(), form) == out.end()) {
        out.push_back(std::move(form));
      }
    }
  }
  return out;
}

bool WordNet::in_use(std::string_view word) const {
  const std::string lemma = lemma_of(word);
  for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
    for (const auto& form : impl_->base_forms(p, lemma)) {
      const auto f = fields(impl_->find(p, form));
      const std::size_t at = Impl::sense_counts_at(f);
      std::size_t tagged = 0;
      if (at != 0 && number(f[at + 1], tagged) && tagged > 0) return true;
    }
  }
  return false;
}

bool WordNet::names_organism(std::string_view word) const {
  constexpr unsigned kNounAnimal = 5;
  constexpr unsigned kNounPlant = 20;
  std::string base;
  Synset s;
  return impl_->first_sense(0, lemma_of(word), base, s) &&
         (s.lex_file == kNounAnimal || s.lex_file == kNounPlant);
}

std::uint32_t WordNet::frequency(std::string_view word) const {
  const std::string_view file = impl_->counts.text();
  if (file.empty()) return 0;
  const std::string lemma = lemma_of(word);
  std::vector<std::string> bases;
  for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
    for (auto& base : impl_->base_forms(p, lemma)) {
      if (std::find(bases.begin(), bases.end(), base) == bases.end()) bases.push_back(base);
    }
  }
  std::uint64_t total = 0;
  for (const auto& base : bases) {
    // The first line at or after "base%" (lines are sorted by sense key), then each line of
    // one of its senses.
    const std::string prefix = base + '%';
    for (std::size_t at = first_line_from(file, 0, prefix); at < file.size();) {
      const std::string_view line = line_at(file, at);
      if (!line.starts_with(prefix)) break;
      const auto f = fields(line);
      std::size_t count = 0;
      if (f.size() >= 3 && number(f[2], count)) total += count;
      at += line.size() + 1;
    }
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(total, UINT32_MAX));
}

bool WordNet::proper_noun(std::string_view word) const {
  const std::string lemma = lemma_of(word);
  std::string base;
  Synset s;
  if (!impl_->first_sense(0, lemma, base, s)) return false;
  // The data files keep a lemma's case: "Phoenix", "German", "English". Capitals throughout
  // make an acronym ("SMS"), often the task itself: not a name.
  const auto written = std::find_if(s.words.begin(), s.words.end(), [&](std::string_view w) {
    return word_of(w) == word_of(base);
  });
  if (written == s.words.end()) return false;
  // Of a phrase, its first word: "New_York" is a name, "ZIP_code" an acronym's phrase. Two
  // capitals first make an abbreviation too ("MEd", a degree: "meds" are no name).
  const auto capitalised = [](std::string_view w) {
    w = w.substr(0, w.find('_'));
    const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    return !w.empty() && upper(w[0]) && !(w.size() > 1 && upper(w[1])) &&
           std::any_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  };
  if (!capitalised(*written)) return false;
  // Written with a capital as a place, a river or a mountain, a people or a person, or a
  // language: units and things have one too ("Calorie", "WiFi"), and are no names. "Cambridge"
  // is first the university, and a city too.
  const auto names = [](unsigned lex_file) {
    return lex_file == kNounCommunication || lex_file == kNounGroup || lex_file == kNounLocation ||
           lex_file == kNounObject || lex_file == kNounPerson;
  };
  bool a_name = false;
  for (const std::size_t offset : Impl::offsets(impl_->find(0, base))) {
    Synset sense;
    if (!impl_->synset(0, offset, sense) || !names(sense.lex_file)) continue;
    a_name = std::any_of(sense.words.begin(), sense.words.end(), [&](std::string_view w) {
      return word_of(w) == word_of(base) && capitalised(w);
    });
    if (a_name) break;
  }
  if (!a_name) return false;
  // A word that is also a common adjective is used as one ("mobile", not Mobile, Alabama); a
  // proper adjective keeps its capital ("German").
  std::string adjective;
  Synset a;
  if (!impl_->first_sense(2, lemma, adjective, a)) return true;
  for (const auto& aw : a.words) {
    if (word_of(aw) == word_of(adjective)) return !aw.empty() && aw[0] >= 'A' && aw[0] <= 'Z';
  }
  return true;
}

bool WordNet::names_instance(std::string_view word) const {
  std::string base;
  Synset s;
  if (!impl_->first_sense(0, lemma_of(word), base, s)) return false;
  return std::any_of(s.pointers.begin(), s.pointers.end(),
                     [](const Synset::Pointer& p) { return p.symbol == "@i"; });
}

std::vector<PlacePart> WordNet::place(std::string_view word, int levels) const {
  std::vector<PlacePart> out;
  const std::string lemma = lemma_of(word);
  // A place: a city, region or country (noun.location), or a continent (noun.object, with such
  // places as parts; a river or a mountain range has none).
  const auto location = [&](std::size_t offset) {
    Synset s;
    if (!impl_->synset(0, offset, s)) return false;
    if (s.lex_file == kNounLocation) return true;
    if (s.lex_file != kNounObject) return false;
    return std::any_of(s.pointers.begin(), s.pointers.end(), [&](const Synset::Pointer& ptr) {
      Synset part;
      return ptr.symbol == "%p" && ptr.pos == 0 && impl_->synset(0, ptr.offset, part) &&
             part.lex_file == kNounLocation;
    });
  };
  // Or a country's acronym, written in capitals as WordNet writes it ("UK", "USA"). In lower
  // case it is seldom one ("us"), and a state's is often a word ("ID", "OK", "OR").
  const bool capitals = word.size() >= 2 && std::all_of(word.begin(), word.end(), [](char c) {
                          return c >= 'A' && c <= 'Z';
                        });
  const auto country_written_so = [&](std::size_t offset) {
    Synset s;
    if (!impl_->synset(0, offset, s) ||
        std::none_of(s.words.begin(), s.words.end(),
                     [&](std::string_view w) { return w == word; })) {
      return false;
    }
    return std::any_of(s.pointers.begin(), s.pointers.end(), [&](const Synset::Pointer& ptr) {
      Synset kind;
      if (ptr.symbol != "@i" || ptr.pos != 0 || !impl_->synset(0, ptr.offset, kind)) return false;
      return std::any_of(kind.words.begin(), kind.words.end(), [](std::string_view w) {
        const std::string_view last = w.substr(w.rfind('_') + 1);
        return last == "country" || last == "nation" || last == "kingdom";
      });
    });
  };
  // The first noun sense a place (one synset read), and written as a name (proper_noun reads
  // every sense): most capitalised words of a registry are neither.
  for (const auto& form : impl_->base_forms(0, lemma)) {
    const auto senses = Impl::offsets(impl_->find(0, form));
    if (senses.empty()) continue;
    if (location(senses.front()) &&
        ((capitals && country_written_so(senses.front())) || proper_noun(word))) {
      out.push_back({senses.front(), 0});
    }
    break;
  }
  if (out.empty()) {
    // A proper adjective ("Canadian", written with its capital) whose first sense pertains to a
    // place.
    std::string base;
    Synset a;
    if (impl_->first_sense(2, lemma, base, a) &&
        std::any_of(a.words.begin(), a.words.end(), [&](std::string_view w) {
          return word_of(w) == word_of(base) && !w.empty() && w[0] >= 'A' && w[0] <= 'Z';
        })) {
      for (const auto& ptr : a.pointers) {
        if (ptr.symbol == "\\" && ptr.pos == 0 && location(ptr.offset)) {
          out.push_back({ptr.offset, 0});
          break;
        }
      }
    }
  }
  if (out.empty()) return out;
  // A word that also names a language says which language more often than where: "English
  // dictionary", "Spanish verbs", "Java SDK".
  for (const auto& form : impl_->base_forms(0, lemma)) {
    for (const std::size_t offset : Impl::offsets(impl_->find(0, form))) {
      Synset s;
      if (impl_->synset(0, offset, s) && s.lex_file == kNounCommunication) return {};
    }
  }
  return impl_->wholes(out.front().offset, levels, /*every=*/true);
}

std::vector<std::string> WordNet::regions(std::string_view word, int levels) const {
  std::vector<std::string> out;
  for (const auto& form : impl_->base_forms(0, lemma_of(word))) {
    const auto senses = Impl::offsets(impl_->find(0, form));
    if (senses.empty()) continue;
    for (const auto& whole : impl_->wholes(senses.front(), levels, /*every=*/false)) {
      Synset s;
      if (whole.steps == 0 || !impl_->synset(0, whole.offset, s)) continue;
      for (const auto& w : s.words) out.push_back(word_of(w));
    }
    break;
  }
  return out;
}

std::vector<RelatedWord> WordNet::related(std::string_view word, int senses, unsigned parts,
                                          bool capitals) const {
  const std::string lemma = lemma_of(word);
  std::vector<RelatedWord> out;
  std::unordered_set<std::string> seen;
  seen.insert(word_of(lemma));
  std::array<std::vector<std::string>, kPos.size()> bases;  // by part of speech
  for (std::size_t p = 0; p < kPos.size(); ++p) {
    bases[p] = impl_->base_forms(static_cast<int>(p), lemma);
    for (const auto& base : bases[p]) seen.insert(word_of(base));
  }
  const auto add = [&](std::string_view w, Relation relation, int sense) {
    std::string text = word_of(w);
    if (seen.insert(text).second) {
      out.push_back({std::move(text), relation, static_cast<std::uint8_t>(sense)});
    }
  };
  // Which relations of which senses: a noun's first senses, the broader synsets, wholes and
  // definitions of its first two and the narrower synsets of its first; a verb's and an adjective's
  // first two senses and their derived and similar words; an adverb only its adjective. A word of
  // many senses ("get", "right") keeps only its first: the others are seldom what a request means.
  struct Sense {
    int pos;
    int rank;
    Synset synset;
  };
  std::vector<Sense> found;
  // Only the parts of speech asked for (bit p of the mask is kPos[p]), if the word has a sense
  // in one of them.
  bool any = false;
  for (std::size_t p = 0; p < kPos.size() && !any; ++p) {
    any = (parts & (1U << p)) != 0 && !bases[p].empty();
  }
  if (!any) parts = kAnyPart;
  // An acronym written in capitals ("RAM", "AI") means the senses WordNet writes so (random
  // access memory, artificial intelligence), not those of the word in lower case (to ram, the
  // three-toed sloth), when it has such senses: looked for among the first kAcronymSenses of
  // each part of speech ("CAT", the scan, is the sixth), so a word of many senses costs no more
  // than that many lines read.
  constexpr std::size_t kAcronymSenses = 16;
  std::vector<Sense> written;
  if (capitals) {
    for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
      for (const auto& base : bases[static_cast<std::size_t>(p)]) {
        std::string upper = base;
        for (char& c : upper) {
          if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        int rank = 0;
        const auto offsets = Impl::offsets(impl_->find(p, base));
        for (std::size_t i = 0; i < offsets.size() && i < kAcronymSenses; ++i) {
          const auto offset = offsets[i];
          Sense s{p, rank, {}};
          if (rank < senses && impl_->synset(p, offset, s.synset) &&
              std::find(s.synset.words.begin(), s.synset.words.end(), upper) !=
                  s.synset.words.end()) {
            written.push_back(std::move(s));
            ++rank;
          }
        }
      }
    }
  }
  if (!written.empty()) {
    found = std::move(written);
  } else {
    for (int p = 0; p < static_cast<int>(kPos.size()); ++p) {
      if ((parts & (1U << p)) == 0) continue;
      for (const auto& base : bases[static_cast<std::size_t>(p)]) {
        const auto offsets = Impl::offsets(impl_->find(p, base));
        int keep = p == 0 ? senses : std::min(senses, 2);
        if (offsets.size() > 8) keep = 1;
        if (p == 3) keep = 1;
        for (std::size_t i = 0; i < offsets.size() && static_cast<int>(i) < keep; ++i) {
          Sense s{p, static_cast<int>(i), {}};
          if (impl_->synset(p, offsets[i], s.synset)) found.push_back(std::move(s));
        }
      }
    }
  }
  for (const auto& s : found) {
    if (s.pos == 3) continue;
    for (const auto& w : s.synset.words) add(w, Relation::kSynonym, s.rank);
  }
  constexpr std::size_t kNarrowerAtMost = 8;
  constexpr std::size_t kSimilarAtMost = 6;
  constexpr std::ptrdiff_t kSatellitesAtMost = 8;
  for (const auto& s : found) {
    const bool noun = s.pos == 0;
    const bool first = s.rank == 0;
    const bool early = s.rank <= 1;
    std::size_t narrower = 0;
    std::size_t similar = 0;
    // A head adjective of many satellites ("bad": corked, fearful, sad, ...) lists kinds of
    // it, not words that mean it: none of them is taken.
    const auto satellites = std::count_if(s.synset.pointers.begin(), s.synset.pointers.end(),
                                          [](const Synset::Pointer& p) { return p.symbol == "&"; });
    const bool kinds = satellites > kSatellitesAtMost;
    for (const auto& ptr : s.synset.pointers) {
      if (ptr.symbol == "&" && kinds) continue;
      Relation relation;
      if (s.pos == 3) {
        if (ptr.symbol != "\\") continue;
        relation = Relation::kSimilar;
      } else if (ptr.symbol == "&" || ptr.symbol == "\\" || ptr.symbol == "=") {
        // Similar words, pertainyms and attributes: the first few.
        if (++similar > kSimilarAtMost) continue;
        relation = Relation::kSimilar;
      } else if (ptr.symbol == "+") {
        relation = Relation::kDerived;
      } else if (noun && early &&
                 (ptr.symbol == "@" || ptr.symbol == "@i" || ptr.symbol == "#p" ||
                  ptr.symbol == "#m")) {
        relation = Relation::kBroader;
      } else if (noun && first && (ptr.symbol == "~" || ptr.symbol == "~i")) {
        if (++narrower > kNarrowerAtMost) continue;
        relation = Relation::kNarrower;
      } else {
        continue;
      }
      Synset target;
      if (!impl_->synset(ptr.pos, ptr.offset, target)) continue;
      if (ptr.target != 0) {
        if (ptr.target <= target.words.size()) add(target.words[ptr.target - 1], relation, s.rank);
      } else {
        for (const auto& w : target.words) add(w, relation, s.rank);
      }
    }
    if (noun && early) {
      for (const auto& g : gloss_words(s.synset.gloss)) add(g, Relation::kGloss, s.rank);
    }
  }
  return out;
}

}  // namespace hearth::a2s
