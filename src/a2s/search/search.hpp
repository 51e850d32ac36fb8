#pragma once
/// Relevance search over service definitions (docs/a2s.md, "Search"): BM25F over names,
/// descriptions, variable descriptions and examples, with Snowball stemming; a request's words
/// also match through WordNet's related words, terms the registry's own texts use together, and
/// spelling correction against the registry's vocabulary, each weighted below the word itself;
/// names of places and brands count less unless they name a service.

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2s/model.hpp"

namespace hearth::a2s {

/// The fields of a capability's document, in the order of TermMatch::fields.
inline constexpr std::array<std::string_view, 6> kSearchFields = {
    "capability.name", "capability.description", "service.name", "service.description", "variables",
    "examples"};

/// How a request's word reached an indexed term (SearchOptions::explain).
struct TermMatch {
  std::string word;   ///< the request's word
  std::string term;   ///< the indexed term (a stem)
  std::string via;    ///< "word", "spelling", "wordnet synonym", ..., "registry co-occurrence",
                      ///< "joined", "split", "place" (a service of the request's place: no
                      ///< field's, `term` is the request's word)
  double weight = 0;  ///< the expansion's weight, times the name factor
  double idf = 0;
  double score = 0;  ///< what it adds to the capability (before dividing by the ideal)
  std::array<double, kSearchFields.size()> fields{};  ///< `score` split by field
};

struct CapabilityHit {
  std::size_t index = 0;           ///< into Definition::capabilities
  double score = 0;                ///< relevance_score in [0, 1]
  std::vector<TermMatch> matches;  ///< with SearchOptions::explain
};

struct ServiceHit {
  std::shared_ptr<const Definition> definition;
  double score = 0;                         ///< relevance_score in [0, 1]
  std::vector<CapabilityHit> capabilities;  ///< best first; only those that matched
  /// With SearchOptions::explain: the request names a place and this service's texts name only
  /// others, so its relevance counts kElsewhereWeight (0.6) of what its words make.
  bool elsewhere = false;
};

struct SearchOptions {
  std::size_t limit = 10;              ///< services returned at most
  std::size_t capabilities_limit = 5;  ///< capabilities per service at most
  double min_score = 0.0;              ///< drop hits below this relevance
  bool explain = false;                ///< fill CapabilityHit::matches
};

/// What a request's word was read as: the terms it looks for, each with its weight.
struct QueryWord {
  std::string word;
  bool name = false;   ///< a place, brand, time or number: counts kNameWeight unless it names
                       ///< the service
  bool place = false;  ///< a place: services whose texts name only other places count less
  struct Term {
    std::string term;
    std::string via;
    double weight = 0;
  };
  std::vector<Term> terms;  ///< empty: nothing in the registry has it
};

/// An immutable index; build once per registry snapshot, query from any thread.
class SearchIndex {
 public:
  explicit SearchIndex(std::vector<std::shared_ptr<const Definition>> definitions);
  ~SearchIndex();
  SearchIndex(const SearchIndex&) = delete;
  SearchIndex& operator=(const SearchIndex&) = delete;

  std::vector<ServiceHit> search(std::string_view query, const SearchOptions& options = {}) const;

  /// How the request's words are read (for an explanation).
  std::vector<QueryWord> interpret(std::string_view query) const;

  /// Bytes the index holds (for the benchmark's memory figure).
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The spec's registry response: {"services": [{"name", "description", "domain",
/// "relevance_score", "relevant_capabilities": [{"name", "description", "relevance_score",
/// "requiredScopes", "inputVariables", "tempVariables", "outputVariables", "request"}]}]},
/// variables as the definition wrote them.
json::value registry_response(const std::vector<ServiceHit>& hits);

/// The explanation members: `{"words": [{"word", "name", "place"?, "terms": [{"term", "via",
/// "weight"}]}]}` for the query, and each capability's `matches` (see TermMatch); a service
/// whose texts name only places other than the request's has `"elsewhere": true`.
json::value query_explanation(const std::vector<QueryWord>& words);
json::value matches_json(const std::vector<TermMatch>& matches);

/// The malformed lines of the compiled-in curated vocabulary (thesaurus.txt), "line N: why".
std::vector<std::string> thesaurus_errors();

}  // namespace hearth::a2s
