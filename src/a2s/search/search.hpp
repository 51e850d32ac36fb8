#pragma once
/// Relevance search over service definitions (docs/a2s.md, "Search"): BM25F over names,
/// descriptions, variable descriptions and examples, with Snowball stemming.

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "a2s/model.hpp"

namespace hearth::a2s {

struct CapabilityHit {
  std::size_t index = 0;  ///< into Definition::capabilities
  double score = 0;       ///< relevance_score in [0, 1]
};

struct ServiceHit {
  std::shared_ptr<const Definition> definition;
  double score = 0;                         ///< relevance_score in [0, 1]
  std::vector<CapabilityHit> capabilities;  ///< best first; only those that matched
};

struct SearchOptions {
  std::size_t limit = 10;              ///< services returned at most
  std::size_t capabilities_limit = 5;  ///< capabilities per service at most
  double min_score = 0.0;              ///< drop hits below this relevance
};

/// An immutable index; build once per registry snapshot, query from any thread.
class SearchIndex {
 public:
  explicit SearchIndex(std::vector<std::shared_ptr<const Definition>> definitions);
  ~SearchIndex();
  SearchIndex(const SearchIndex&) = delete;
  SearchIndex& operator=(const SearchIndex&) = delete;

  std::vector<ServiceHit> search(std::string_view query, const SearchOptions& options = {}) const;

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

}  // namespace hearth::a2s
