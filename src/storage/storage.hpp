#pragma once
/// The storage layer hearth's subsystems share (the vault first; workspaces and apps later):
/// a small relational interface, errors as values, with SQLite behind it today
/// (docs/a2s.md, "Storage"). A PostgreSQL backend implements the same `Database`: statements
/// with positional `?` parameters, typed rows, transactions as RAII objects, and versioned
/// migrations per component.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.hpp"

namespace hearth::storage {

/// Bytes stored as a BLOB (TEXT is std::string).
struct Blob {
  std::string bytes;
  bool operator==(const Blob&) const = default;
};

/// A parameter or a column value: NULL, INTEGER, REAL, TEXT or BLOB.
using Value = std::variant<std::nullptr_t, std::int64_t, double, std::string, Blob>;
using Row = std::vector<Value>;
using Params = std::vector<Value>;

/// One step of a component's schema: applied once, in one transaction with its record.
struct Migration {
  int version = 0;  ///< 1, 2, 3, ... in order
  std::string sql;  ///< one or more statements
  /// When set, run instead of `sql` on PostgreSQL, for what translating `sql` cannot do
  /// (PostgreSQL otherwise runs `sql` with SQLite's type names translated: INTEGER -> BIGINT,
  /// REAL -> DOUBLE PRECISION, BLOB -> BYTEA, INTEGER PRIMARY KEY [AUTOINCREMENT] -> an identity
  /// column).
  std::string postgres = {};  // (an initializer: `{1, "sql"}` stays warning-free)
};

class Transaction {
 public:
  virtual ~Transaction() = default;  ///< rolls back unless committed
  virtual Status commit() = 0;
};

class Database {
 public:
  virtual ~Database() = default;

  /// Runs a statement that returns no rows; the number of rows it changed.
  virtual Result<std::int64_t> execute(std::string_view sql, const Params& params = {}) = 0;
  /// Runs a query; every row.
  virtual Result<std::vector<Row>> query(std::string_view sql, const Params& params = {}) = 0;
  /// Starts a write transaction (on SQLite: BEGIN IMMEDIATE, so it holds the write lock at
  /// once). Statements on this thread run inside it until it is committed or destroyed; other
  /// threads wait.
  virtual Result<std::unique_ptr<Transaction>> begin() = 0;
  /// A transaction in which outside SQL (execute_untrusted_script: an app's migration) and
  /// hearth's own record of it commit together. The same as begin() on SQLite; on an app's
  /// PostgreSQL database it runs as the app's role (granted what that record needs), where
  /// begin() runs as hearth's.
  virtual Result<std::unique_ptr<Transaction>> begin_untrusted() { return begin(); }
  /// Applies `component`'s migrations newer than those it has, each in one transaction with its
  /// record in `schema_migrations`. A database whose component is at a version newer than the
  /// last migration given is refused (it was written by a newer hearth).
  virtual Status migrate(std::string_view component, const std::vector<Migration>& migrations) = 0;

  /// Runs one statement written outside hearth (an Agent App's SQL): prepared afresh (never from
  /// the statement cache) and run under an authorizer that refuses ATTACH and DETACH, every
  /// PRAGMA but reading table_info, index_list, index_info and foreign_key_list, transaction
  /// and savepoint statements (hearth holds the transactions), virtual tables, load_extension,
  /// and any use of a table named `schema_migrations` or beginning with `hearth_` (hearth's
  /// own; a view or trigger that reaches one is refused when it is used, and hearth's own SQL
  /// never touches an app's tables, so an app's trigger never runs outside the authorizer).
  /// More than one statement in `sql` is refused. Refusals are kPermissionDenied.
  virtual Result<std::vector<Row>> query_untrusted(std::string_view sql, const Params& params) = 0;
  /// Every statement of an outside script (an app's migration file), in order, under the same
  /// authorizer, inside whatever transaction the caller holds.
  virtual Status execute_untrusted_script(std::string_view sql) = 0;
};

/// The `reason` in Error::data ({"reason": "quota"}) of a write refused because the database
/// holds as much as its quota allows (SqliteOptions::max_bytes). Callers match on it, never on
/// the message.
inline constexpr std::string_view kQuotaReason = "quota";

/// The `reason` in Error::data of a call that failed because the database server could not be
/// reached (PostgreSQL): nothing of it was done, and the next call connects again.
inline constexpr std::string_view kUnavailableReason = "database-unavailable";

/// Whether `error` carries data {"reason": `reason`}.
inline bool has_reason(const Error& error, std::string_view reason) {
  const auto* data = error.data.if_object();
  const auto* r = data != nullptr ? data->if_contains("reason") : nullptr;
  return r != nullptr && r->is_string() && r->get_string() == reason;
}

/// Whether `error` is a write refused by the quota.
inline bool quota_full(const Error& error) {
  return has_reason(error, kQuotaReason);
}

/// Whether `error` is a call that failed because the database server was unavailable.
inline bool database_unavailable(const Error& error) {
  return has_reason(error, kUnavailableReason);
}

struct SqliteOptions {
  std::chrono::milliseconds busy_timeout{5000};
  /// When > 0, the most the database file may hold (SQLite's max_page_count): a write past it
  /// fails with an error that says the quota is full, its data {"reason": "quota"}.
  std::int64_t max_bytes = 0;
};

/// Opens (creating it with mode 0600) an SQLite database: WAL journal, synchronous=FULL (a
/// write is on disk when it returns), foreign keys on, a busy timeout. One connection, guarded
/// by a mutex: calls from several threads are serialised.
Result<std::unique_ptr<Database>> open_sqlite(const std::filesystem::path& file,
                                              SqliteOptions options = {});

}  // namespace hearth::storage
