// The SQLite implementation of storage::Database.
#include <fcntl.h>
#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "common/fd.hpp"
#include "storage/storage.hpp"

namespace hearth::storage {
namespace {

/// {"reason": "quota"} when the last statement on `db` stopped at the quota (`max_bytes`, set as
/// SQLite's max_page_count, which fails a write with SQLITE_FULL); else null.
boost::json::value quota_data(sqlite3* db, std::int64_t max_bytes) {
  if (db == nullptr || max_bytes <= 0 || sqlite3_errcode(db) != SQLITE_FULL) return nullptr;
  return boost::json::object{{"reason", kQuotaReason}};
}

Error sqlite_error(sqlite3* db, std::string_view what, std::int64_t max_bytes = 0) {
  return Error::make(ErrorCode::kInternalError,
                     "storage: " + std::string(what) + ": " +
                         (db != nullptr ? sqlite3_errmsg(db) : "out of memory"),
                     quota_data(db, max_bytes));
}

class SqliteDatabase;

class SqliteTransaction final : public Transaction {
 public:
  SqliteTransaction(SqliteDatabase& db, std::unique_lock<std::recursive_mutex> lock)
      : db_(db), lock_(std::move(lock)) {}
  ~SqliteTransaction() override;
  Status commit() override;

 private:
  SqliteDatabase& db_;
  std::unique_lock<std::recursive_mutex> lock_;
  bool done_ = false;
};

/// Whether a table belongs to hearth inside a database an app also writes.
bool hearth_table(const char* name) {
  if (name == nullptr) return false;
  const std::string_view n(name);
  return n == "schema_migrations" || n.rfind("hearth_", 0) == 0;
}

/// The authorizer of outside SQL (Database::query_untrusted); `active` points at the flag that
/// says whether the statement being prepared or run is outside SQL.
int authorize(void* active, int action, const char* a1, const char* a2, const char* /*db*/,
              const char* /*trigger*/) {
  if (!*static_cast<bool*>(active)) return SQLITE_OK;
  switch (action) {
    case SQLITE_ATTACH:
    case SQLITE_DETACH:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
    case SQLITE_CREATE_VTABLE:
    case SQLITE_DROP_VTABLE:
      return SQLITE_DENY;
    case SQLITE_PRAGMA: {
      // Only pragmas that describe a table (they have no form that changes anything), and not
      // of hearth's tables.
      const std::string_view pragma = a1 != nullptr ? a1 : "";
      return (pragma == "table_info" || pragma == "index_list" || pragma == "index_info" ||
              pragma == "foreign_key_list") &&
                     !hearth_table(a2)
                 ? SQLITE_OK
                 : SQLITE_DENY;
    }
    case SQLITE_FUNCTION:
      return a2 != nullptr && std::string_view(a2) == "load_extension" ? SQLITE_DENY : SQLITE_OK;
    // Where SQLite puts the table an action touches (sqlite3_set_authorizer's table): the first
    // argument (the second is a column, or nothing) ...
    case SQLITE_READ:
    case SQLITE_UPDATE:
    case SQLITE_INSERT:
    case SQLITE_DELETE:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_TABLE:
    case SQLITE_ANALYZE:
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TEMP_VIEW:
      return hearth_table(a1) ? SQLITE_DENY : SQLITE_OK;
    // ... the second (the first is the database) ...
    case SQLITE_ALTER_TABLE:
      return hearth_table(a2) ? SQLITE_DENY : SQLITE_OK;
    // ... or the second after an index's or trigger's own name: neither may be hearth's.
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_TEMP_TRIGGER:
      return hearth_table(a1) || hearth_table(a2) ? SQLITE_DENY : SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

Error untrusted_error(sqlite3* db, std::int64_t max_bytes) {
  const int rc = sqlite3_errcode(db);
  if (rc == SQLITE_AUTH) {
    return Error::make(ErrorCode::kPermissionDenied,
                       std::string("storage: not allowed: ") + sqlite3_errmsg(db) +
                           " (ATTACH, PRAGMA, transactions, extensions and hearth's own tables "
                           "are not available to an app)");
  }
  if (rc == SQLITE_FULL && max_bytes > 0) {
    return Error::make(ErrorCode::kPermissionDenied,
                       "storage: the quota of " + std::to_string(max_bytes) +
                           " bytes is full; nothing of the statement was written",
                       quota_data(db, max_bytes));
  }
  return Error::make(ErrorCode::kInvalidParams, std::string("storage: ") + sqlite3_errmsg(db));
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(sqlite3* db, std::int64_t max_bytes) : db_(db), max_bytes_(max_bytes) {
    sqlite3_set_authorizer(db_, authorize, &untrusted_);
  }
  ~SqliteDatabase() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  Result<std::int64_t> execute(std::string_view sql, const Params& params) override {
    std::lock_guard lock(mutex_);
    HEARTH_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, prepare(sql, params));
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    }
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) return sqlite_error(db_, "executing a statement", max_bytes_);
    return static_cast<std::int64_t>(sqlite3_changes(db_));
  }

  Result<std::vector<Row>> query(std::string_view sql, const Params& params) override {
    std::lock_guard lock(mutex_);
    HEARTH_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, prepare(sql, params));
    std::vector<Row> rows;
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) rows.push_back(row_of(stmt));
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) return sqlite_error(db_, "running a query", max_bytes_);
    return rows;
  }

  Result<std::unique_ptr<Transaction>> begin() override {
    std::unique_lock lock(mutex_);
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return sqlite_error(db_, "starting a transaction");
    }
    return std::unique_ptr<Transaction>(
        std::make_unique<SqliteTransaction>(*this, std::move(lock)));
  }

  Status migrate(std::string_view component, const std::vector<Migration>& migrations) override {
    std::lock_guard lock(mutex_);
    HEARTH_RETURN_IF_ERROR(execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version INTEGER "
        "NOT NULL, applied_at INTEGER NOT NULL, PRIMARY KEY (component, version))",
        {}));
    HEARTH_ASSIGN_OR_RETURN(
        auto rows,
        query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE component = ?",
              {std::string(component)}));
    const auto current = std::get<std::int64_t>(rows.at(0).at(0));
    int newest = 0;
    for (const auto& m : migrations) newest = std::max(newest, m.version);
    if (current > newest) {
      return Error::make(ErrorCode::kInternalError,
                         "storage: " + std::string(component) + " is at schema version " +
                             std::to_string(current) + ", newer than this hearth knows (" +
                             std::to_string(newest) + "): use the newer hearth");
    }
    for (const auto& m : migrations) {
      if (m.version <= current) continue;
      HEARTH_ASSIGN_OR_RETURN(auto tx, begin());
      char* message = nullptr;
      if (sqlite3_exec(db_, m.sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string why = message != nullptr ? message : "unknown error";
        sqlite3_free(message);
        return Error::make(ErrorCode::kInternalError,
                           "storage: " + std::string(component) + " migration " +
                               std::to_string(m.version) + " failed: " + why);
      }
      const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      HEARTH_RETURN_IF_ERROR(
          execute("INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)",
                  {std::string(component), std::int64_t{m.version}, std::int64_t{now}}));
      HEARTH_RETURN_IF_ERROR(tx->commit());
    }
    return Status{};
  }

  Result<std::vector<Row>> query_untrusted(std::string_view sql, const Params& params) override {
    std::lock_guard lock(mutex_);
    Untrusted scope(untrusted_);
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail) !=
        SQLITE_OK) {
      return untrusted_error(db_, max_bytes_);
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> owned(stmt, sqlite3_finalize);
    if (stmt == nullptr) return Error::make(ErrorCode::kInvalidParams, "storage: no statement");
    const std::string_view rest(tail, static_cast<std::size_t>(sql.data() + sql.size() - tail));
    if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
      return Error::make(ErrorCode::kInvalidParams, "storage: one statement at a time");
    }
    HEARTH_RETURN_IF_ERROR(bind(stmt, params));
    std::vector<Row> rows;
    int rc = 0;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) rows.push_back(row_of(stmt));
    if (rc != SQLITE_DONE) return untrusted_error(db_, max_bytes_);
    return rows;
  }

  Status execute_untrusted_script(std::string_view sql) override {
    std::lock_guard lock(mutex_);
    Untrusted scope(untrusted_);
    const char* at = sql.data();
    const char* end = sql.data() + sql.size();
    while (at < end) {
      sqlite3_stmt* stmt = nullptr;
      const char* tail = nullptr;
      if (sqlite3_prepare_v2(db_, at, static_cast<int>(end - at), &stmt, &tail) != SQLITE_OK) {
        return untrusted_error(db_, max_bytes_);
      }
      at = tail;
      if (stmt == nullptr) continue;  // white space or a comment
      std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> owned(stmt, sqlite3_finalize);
      int rc = 0;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      }
      if (rc != SQLITE_DONE) return untrusted_error(db_, max_bytes_);
    }
    return Status{};
  }

  Status end(bool commit) {
    if (sqlite3_exec(db_, commit ? "COMMIT" : "ROLLBACK", nullptr, nullptr, nullptr) != SQLITE_OK) {
      auto error = sqlite_error(db_, commit ? "committing" : "rolling back");
      if (commit) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return error;
    }
    return Status{};
  }

 private:
  /// Marks the statements prepared and run in its lifetime as outside SQL.
  struct Untrusted {
    explicit Untrusted(bool& flag) : flag_(flag) { flag_ = true; }
    ~Untrusted() { flag_ = false; }
    Untrusted(const Untrusted&) = delete;
    Untrusted& operator=(const Untrusted&) = delete;
    bool& flag_;
  };

  static Row row_of(sqlite3_stmt* stmt) {
    Row row;
    const int n = sqlite3_column_count(stmt);
    row.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      switch (sqlite3_column_type(stmt, i)) {
        case SQLITE_INTEGER:
          row.emplace_back(static_cast<std::int64_t>(sqlite3_column_int64(stmt, i)));
          break;
        case SQLITE_FLOAT:
          row.emplace_back(sqlite3_column_double(stmt, i));
          break;
        case SQLITE_TEXT: {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
          row.emplace_back(
              std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, i))));
          break;
        }
        case SQLITE_BLOB: {
          const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt, i));
          const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt, i));
          row.emplace_back(Blob{data == nullptr ? std::string() : std::string(data, size)});
          break;
        }
        default:
          row.emplace_back(nullptr);
      }
    }
    return row;
  }

  Status bind(sqlite3_stmt* stmt, const Params& params) {
    sqlite3_clear_bindings(stmt);
    if (static_cast<std::size_t>(sqlite3_bind_parameter_count(stmt)) != params.size()) {
      return Error::make(ErrorCode::kInvalidParams,
                         "storage: the statement takes " +
                             std::to_string(sqlite3_bind_parameter_count(stmt)) + " parameters, " +
                             std::to_string(params.size()) + " given");
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i) + 1;
      int rc = SQLITE_OK;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::nullptr_t>) {
              rc = sqlite3_bind_null(stmt, at);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
              rc = sqlite3_bind_int64(stmt, at, v);
            } else if constexpr (std::is_same_v<T, double>) {
              rc = sqlite3_bind_double(stmt, at, v);
            } else if constexpr (std::is_same_v<T, std::string>) {
              rc = sqlite3_bind_text64(stmt, at, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
            } else {
              rc = sqlite3_bind_blob64(stmt, at, v.bytes.data(), v.bytes.size(), SQLITE_TRANSIENT);
            }
          },
          params[i]);
      if (rc != SQLITE_OK) return sqlite_error(db_, "binding a parameter");
    }
    return Status{};
  }

  Result<sqlite3_stmt*> prepare(std::string_view sql, const Params& params) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                             SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
        return sqlite_error(db_, "preparing a statement");
      }
      it = statements_.emplace(std::string(sql), stmt).first;
    }
    sqlite3_stmt* stmt = it->second;
    if (auto bound = bind(stmt, params); !bound.ok()) {
      // A count mismatch in hearth's own SQL is hearth's fault.
      return Error::make(ErrorCode::kInternalError, bound.error().message);
    }
    return stmt;
  }

  sqlite3* db_;
  std::int64_t max_bytes_ = 0;
  bool untrusted_ = false;  // read by the authorizer
  std::recursive_mutex mutex_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

SqliteTransaction::~SqliteTransaction() {
  if (!done_) (void)db_.end(false);
}

Status SqliteTransaction::commit() {
  if (done_) return Error::make(ErrorCode::kInternalError, "storage: transaction already ended");
  done_ = true;
  return db_.end(true);
}

}  // namespace

Result<std::unique_ptr<Database>> open_sqlite(const std::filesystem::path& file,
                                              SqliteOptions options) {
  // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the same mode.
  if (const Fd created(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)); !created) {
    return Error::make(ErrorCode::kInternalError,
                       "storage: cannot open " + file.string() + ": " + std::strerror(errno));
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    auto error = sqlite_error(db, "opening " + file.string());
    sqlite3_close_v2(db);
    return error;
  }
  sqlite3_busy_timeout(db, static_cast<int>(options.busy_timeout.count()));
  // Outside SQL must not rewrite the schema's text or reach files: defensive mode, and no
  // functions with side effects from the schema.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  auto database = std::make_unique<SqliteDatabase>(db, options.max_bytes);
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"}) {
    if (sqlite3_exec(db, pragma, nullptr, nullptr, nullptr) != SQLITE_OK) {
      return sqlite_error(db, pragma);
    }
  }
  if (options.max_bytes > 0) {
    HEARTH_ASSIGN_OR_RETURN(auto page, database->query("PRAGMA page_size", {}));
    const auto page_size = std::get<std::int64_t>(page.at(0).at(0));
    const auto pages = std::max<std::int64_t>(1, options.max_bytes / page_size);
    HEARTH_RETURN_IF_ERROR(
        database->execute("PRAGMA max_page_count = " + std::to_string(pages), {}));
  }
  // A file that is not a database shows here, not at the first real statement.
  HEARTH_RETURN_IF_ERROR(database->query("SELECT count(*) FROM sqlite_master", {}));
  return std::unique_ptr<Database>(std::move(database));
}

}  // namespace hearth::storage
