#pragma once
/// An Agent App's own storage (docs/agent-apps.md, "App storage"): one SQLite file per app,
/// `<state>/apps/data/<name>/app.db`, holding the app's tables (made by the package's
/// migrations) and a key-value table hearth keeps for it. Everything an app asks runs as
/// outside SQL (storage::Database::query_untrusted: no ATTACH, PRAGMA, extensions or hearth's
/// tables) within the app's size quota.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/storage.hpp"

namespace hearth::agentapp {

/// The package's migration files: the `*.sql` files, in name order, of the folder its manifest
/// names (`storage.migrations`, else `runtimePackage.storage.migrations`), which must be a
/// folder inside the package. None named: an empty list. Used to run them, to check them in
/// readiness and to compare two versions in an upgrade.
Result<std::vector<std::filesystem::path>> migration_files(const std::filesystem::path& package,
                                                           const json::object& front_matter);

class AppData {
 public:
  static constexpr std::int64_t kDefaultQuota = std::int64_t{256} << 20;

  /// Opens (creating it) the database in `data_dir`.
  static Result<std::unique_ptr<AppData>> open(const std::filesystem::path& data_dir,
                                               std::int64_t quota_bytes = kDefaultQuota);

  /// Applies the package's migrations not applied yet: the `*.sql` files of the folder its
  /// manifest names (`storage.migrations`, else `runtimePackage.storage.migrations`), in name
  /// order, each in one transaction with its record (file name and SHA-256). The first that
  /// fails is rolled back whole and stops the rest; the error names it. A recorded migration
  /// whose file has changed since is an error too. Returns the names applied now.
  Result<json::array> migrate(const std::filesystem::path& package,
                              const json::object& front_matter);
  /// The migrations applied so far: [{name, sha256, appliedAt}].
  Result<json::array> applied();

  /// The value stored under `key`, or null.
  Result<json::value> get(std::string_view key);
  Status put(std::string_view key, const json::value& value);
  /// One statement of the app's SQL with positional parameters (JSON scalars); rows as arrays.
  Result<json::array> query(std::string_view sql, const json::array& params);

  /// The database, for hearth's own records of the app (records.hpp: evidence, artifacts).
  storage::Database& database() { return *db_; }

 private:
  explicit AppData(std::unique_ptr<storage::Database> db) : db_(std::move(db)) {}
  std::unique_ptr<storage::Database> db_;
};

}  // namespace hearth::agentapp
