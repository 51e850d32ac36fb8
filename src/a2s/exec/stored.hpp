#pragma once
/// Service definitions added through the daemon (`registry/define`), beside the registry
/// folders: kept in the storage engine's `registry` database, so that on a shared database
/// (PostgreSQL) a definition added through one daemon is served by every other. Blocking:
/// call it off the I/O threads. Thread-safe (the database serialises).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "storage/engine.hpp"

namespace hearth::a2s {

struct StoredDefinition {
  std::string service;          ///< its serviceName
  std::string document;         ///< the definition as JSON text
  std::int64_t updated_at = 0;  ///< seconds since the epoch
};

class DefinitionStore {
 public:
  /// `file`: the SQLite file (the state dir's registry.db); the `hearth_registry` schema on
  /// PostgreSQL.
  static Result<std::unique_ptr<DefinitionStore>> open(storage::Engine& engine,
                                                       const std::filesystem::path& file);

  Result<std::vector<StoredDefinition>> all();
  /// Adds or replaces the definition of `service`.
  Status put(const std::string& service, const std::string& document);
  /// False when there was none.
  Result<bool> remove(const std::string& service);

 private:
  explicit DefinitionStore(std::unique_ptr<storage::Database> db) : db_(std::move(db)) {}
  std::unique_ptr<storage::Database> db_;
};

}  // namespace hearth::a2s
