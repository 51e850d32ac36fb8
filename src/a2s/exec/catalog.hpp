#pragma once
/// The registry's definitions as the daemon serves them: every registry folder loaded into an
/// immutable Snapshot (definitions, load failures, search index), swapped whole when a file
/// changes. A request holds the snapshot (or the definition) it started with, so a reload never
/// drops or changes a request in flight.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "a2s/definition/definition.hpp"
#include "a2s/exec/stored.hpp"
#include "a2s/search/search.hpp"

namespace hearth::a2s {

struct Snapshot {
  std::vector<std::shared_ptr<const Definition>> definitions;  ///< sorted by serviceName
  std::vector<LoadFailure> failures;
  std::shared_ptr<const SearchIndex> index;
  std::uint64_t generation = 0;  ///< increases with every load

  /// By serviceName (exact, else ignoring ASCII case); null when there is none.
  std::shared_ptr<const Definition> find(std::string_view service) const;
};

class Catalog {
 public:
  explicit Catalog(std::vector<std::filesystem::path> dirs);

  /// Loads every folder now (a missing folder is a load failure, not an exception).
  void load();
  /// Reloads when a definition file was added, removed or changed (name, size or modification
  /// time) since the last load. True when it reloaded.
  bool reload_if_changed();

  /// Serves `stored` (definitions added through the daemon, stored.hpp) beside the folders'
  /// from now on: loads again. A stored definition that does not parse, or names a service a
  /// folder defines, is a load failure (`registry/list`), never served.
  void set_stored(std::vector<StoredDefinition> stored);

  std::shared_ptr<const Snapshot> snapshot() const;
  const std::vector<std::filesystem::path>& dirs() const { return dirs_; }

  /// Where a stored definition says it came from (its `source`, a load failure's file).
  static std::string stored_source(std::string_view service) {
    return "registry-database:" + std::string(service);
  }

 private:
  std::string fingerprint() const;
  void load_with(std::string fingerprint);

  std::vector<std::filesystem::path> dirs_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::string fingerprint_;
  std::vector<StoredDefinition> stored_;  ///< under mutex_
};

}  // namespace hearth::a2s
