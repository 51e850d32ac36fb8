#pragma once
/// An Agent App's own storage (docs/agent-apps.md, "App storage"): where the package's
/// `storage.placement` puts it through the storage engine - one SQLite file per app,
/// `<state>/apps/data/<name>/app.db`, within its size quota (local-sqlite, and every placement
/// but server-postgresql), or a schema and role of the app's own on PostgreSQL
/// (server-postgresql) - holding the app's tables (made by the package's migrations) and a
/// key-value table hearth keeps for it. Everything an app asks runs as outside SQL
/// (storage::Database::query_untrusted: no ATTACH, PRAGMA, extensions or hearth's tables).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"
#include "storage/storage.hpp"

namespace hearth::agentapp {

/// The package's migration files: the `*.sql` files, in name order, of the folder its manifest
/// names (`storage.migrations`, else `runtimePackage.storage.migrations`), which must be a
/// folder inside the package. None named: an empty list. Used to run them, to check them in
/// readiness and to compare two versions in an upgrade.
Result<std::vector<std::filesystem::path>> migration_files(const std::filesystem::path& package,
                                                           const json::object& front_matter);

/// The placement that keeps an app's tables on a PostgreSQL server shared by the daemons.
inline constexpr std::string_view kServerPostgresql = "server-postgresql";
/// Every other placement: an SQLite file in the app's data folder.
inline constexpr std::string_view kLocalSqlite = "local-sqlite";

/// Where the app `app` keeps its tables, from its manifest's `storage` block (else
/// `runtimePackage.storage`): `server-postgresql` with its `isolation` (default per-app-schema)
/// as declared; any other placement, or none, is `local-sqlite` - the file `<data_dir>/app.db`
/// with the default quota - as hearth has always kept local-indexeddb, host-managed,
/// server-managed and external apps' data.
storage::AppPlacement app_placement(std::string_view app, const json::object& front_matter,
                                    const std::filesystem::path& data_dir);

/// A file of an export (AppData::export_tables): its name in the archive and its bytes.
struct ExportedFile {
  std::string name;
  std::string bytes;
};

class AppData {
 public:
  static constexpr std::int64_t kDefaultQuota = std::int64_t{256} << 20;

  /// Opens (creating it) the SQLite database in `data_dir`.
  static Result<std::unique_ptr<AppData>> open(const std::filesystem::path& data_dir,
                                               std::int64_t quota_bytes = kDefaultQuota);
  /// Opens (making it at the first open) the app's database where `placement` puts it
  /// (Engine::open_app); for local-sqlite its folder is made first, private.
  static Result<std::unique_ptr<AppData>> open(storage::Engine& engine,
                                               const storage::AppPlacement& placement);

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

  /// The app's own tables as data, for an export of a database that is not a file (an app on
  /// PostgreSQL): `tables.json` ([{table, file, columns, rows}]) and a JSON Lines file of each
  /// table's rows (`<table>.jsonl`, an object a row; a BLOB as {"base64": ...}). The tables are
  /// those of the app's schema (or file) but hearth's own, listed by the catalogue of
  /// `engine_kind` ("postgresql": information_schema; "sqlite": sqlite_master), and read as
  /// the app's SQL is (query_untrusted).
  Result<std::vector<ExportedFile>> export_tables(std::string_view engine_kind);

  /// The database, for hearth's own records of the app (records.hpp: evidence, artifacts).
  storage::Database& database() { return *db_; }

 private:
  explicit AppData(std::unique_ptr<storage::Database> db) : db_(std::move(db)) {}
  /// Prepares hearth's own tables in an opened database.
  static Result<std::unique_ptr<AppData>> prepared(std::unique_ptr<storage::Database> db);
  std::unique_ptr<storage::Database> db_;
};

}  // namespace hearth::agentapp
