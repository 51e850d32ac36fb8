// The PostgreSQL engine: storage::Database over libpq, the LISTEN/NOTIFY Bus, and Agent Apps'
// roles and schemas. See docs/architecture.md, "Storage engines".
//
// Isolation: every transaction is READ COMMITTED (PostgreSQL's default). What must happen once
// across daemons is decided by the statements themselves (INSERT ... ON CONFLICT, UPDATE ...
// WHERE version = ?, whose row count says who won), which READ COMMITTED makes safe: an UPDATE
// waits for a concurrent one on the same row and re-checks its WHERE against the committed row.
// SERIALIZABLE would add retries everywhere for no invariant hearth relies on. Migrations are
// serialised with a transaction-scoped advisory lock.
//
// Unlike SQLite, a failed statement inside a transaction aborts it: the rest of its statements
// and its commit fail (the commit says the transaction was rolled back).
#include "storage/postgres.hpp"

#include <libpq-fe.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/fd.hpp"
#include "common/random.hpp"
#include "common/sha256.hpp"

namespace hearth::storage::pg {
namespace {

// --- SQL text ------------------------------------------------------------------------------

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool name_char(char c) {
  return word_char(c) || c == '$';
}

/// The end of the quoted string, quoted identifier, comment or dollar-quoted text that begins at
/// `i`, or `i` when none does there.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
  const std::size_t n = s.size();
  const char c = s[i];
  if (c == '\'') {
    // E'...' strings take backslash escapes.
    const bool escapes =
        i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E') && (i < 2 || !name_char(s[i - 2]));
    for (std::size_t j = i + 1; j < n; ++j) {
      if (escapes && s[j] == '\\') {
        ++j;
      } else if (s[j] == '\'') {
        if (j + 1 < n && s[j + 1] == '\'') {
          ++j;
        } else {
          return j + 1;
        }
      }
    }
    return n;
  }
  if (c == '"') {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (s[j] != '"') continue;
      if (j + 1 < n && s[j + 1] == '"') {
        ++j;
      } else {
        return j + 1;
      }
    }
    return n;
  }
  if (c == '-' && i + 1 < n && s[i + 1] == '-') {
    const auto end = s.find('\n', i);
    return end == std::string_view::npos ? n : end + 1;
  }
  if (c == '/' && i + 1 < n && s[i + 1] == '*') {  // PostgreSQL's block comments nest
    int depth = 1;
    std::size_t j = i + 2;
    while (j < n) {
      if (s[j] == '/' && j + 1 < n && s[j + 1] == '*') {
        ++depth;
        j += 2;
      } else if (s[j] == '*' && j + 1 < n && s[j + 1] == '/') {
        j += 2;
        if (--depth == 0) return j;
      } else {
        ++j;
      }
    }
    return n;
  }
  if (c == '$' && (i == 0 || !name_char(s[i - 1]))) {  // $tag$ ... $tag$ ($1 is a parameter)
    std::size_t j = i + 1;
    while (j < n && (std::isalpha(static_cast<unsigned char>(s[j])) != 0 || s[j] == '_' ||
                     (j > i + 1 && std::isdigit(static_cast<unsigned char>(s[j])) != 0))) {
      ++j;
    }
    if (j < n && s[j] == '$') {
      const std::string_view tag = s.substr(i, j - i + 1);
      const auto end = s.find(tag, j + 1);
      return end == std::string_view::npos ? n : end + tag.size();
    }
  }
  return i;
}

/// Past the white space and comments at `i`.
std::size_t skip_blank(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i])) != 0) {
      ++i;
    } else if ((s[i] == '-' || s[i] == '/') && skip_quoted(s, i) != i) {
      i = skip_quoted(s, i);
    } else {
      break;
    }
  }
  return i;
}

/// The word at `i` in upper case (empty when none starts there); `end` gets its end.
std::string upper_word(std::string_view s, std::size_t i, std::size_t& end) {
  end = i;
  std::string word;
  while (end < s.size() && word_char(s[end])) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(s[end])));
    ++end;
  }
  return word;
}

/// The statements of a script, split at the semicolons outside quotes and comments; those
/// holding nothing but white space and comments are left out.
std::vector<std::string_view> split_statements(std::string_view sql) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  std::size_t i = 0;
  const auto cut = [&](std::size_t end) {
    const std::string_view piece = sql.substr(start, end - start);
    if (skip_blank(piece, 0) < piece.size()) out.push_back(piece);
    start = end + 1;
  };
  while (i < sql.size()) {
    if (const auto j = skip_quoted(sql, i); j != i) {
      i = j;
    } else if (sql[i] == ';') {
      cut(i);
      ++i;
    } else {
      ++i;
    }
  }
  if (start < sql.size()) cut(sql.size());
  return out;
}

// --- libpq handles -------------------------------------------------------------------------

struct ConnCloser {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnCloser>;
struct ResultCloser {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultCloser>;

/// Where connections go: libpq's keywords and values, and the server as errors name it.
struct Target {
  std::vector<std::pair<std::string, std::string>> params;
  std::string server;  ///< host, port, database and user; never the password
};

std::string param_of(const Target& t, std::string_view key) {
  for (const auto& [k, v] : t.params) {
    if (k == key) return v;
  }
  return {};
}

std::string describe_server(const Target& t) {
  const auto part = [&](std::string_view key, std::string_view otherwise) {
    auto v = param_of(t, key);
    return v.empty() ? std::string(otherwise) : v;
  };
  return "host " + part("host", part("hostaddr", "(default)")) + ", port " +
         part("port", "(default)") + ", database " + part("dbname", "(default)") + ", user " +
         part("user", "(default)");
}

/// `base` with `overrides` set (replacing a keyword it has) and the server named again.
Target with(const Target& base, const std::vector<std::pair<std::string, std::string>>& overrides) {
  Target t = base;
  for (const auto& [key, value] : overrides) {
    auto it = std::find_if(t.params.begin(), t.params.end(),
                           [&](const auto& p) { return p.first == key; });
    if (it != t.params.end()) {
      it->second = value;
    } else {
      t.params.emplace_back(key, value);
    }
  }
  t.server = describe_server(t);
  return t;
}

/// The `options` value that puts `search_path` first for every statement of a connection (the
/// names are hearth's, [a-z0-9_,], so nothing needs escaping); kept after the URL's own options.
std::string search_path_option(const Target& base, std::string_view path) {
  auto options = param_of(base, "options");
  if (!options.empty()) options += ' ';
  return options + "-c search_path=" + std::string(path);
}

Error unavailable(const std::string& server, std::string_view why) {
  std::string reason(why);
  while (!reason.empty() && std::isspace(static_cast<unsigned char>(reason.back())) != 0) {
    reason.pop_back();
  }
  return Error::make(ErrorCode::kInternalError,
                     "storage: the PostgreSQL server (" + server + ") is unavailable: " + reason +
                         "; hearth connects again at the next call",
                     boost::json::object{{"reason", kUnavailableReason}});
}

bool ok_status(const PGresult* r) {
  const auto status = PQresultStatus(r);
  return r != nullptr && (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK);
}

/// Whether a failure means the connection is gone (or the server is going): the call is
/// refused as unavailable and the connection dropped.
bool connection_lost(PGconn* c, std::string_view sqlstate) {
  return c == nullptr || PQstatus(c) == CONNECTION_BAD || sqlstate.substr(0, 2) == "08" ||
         sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03";
}

/// The error of a failed statement: unavailable, conflict (unique violation, serialization
/// failure, deadlock), permission denied, or else internal (hearth's SQL) / invalid params (an
/// app's).
Error statement_error(const Target& t, PGconn* c, const PGresult* r, std::string_view what,
                      bool outside) {
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  const char* primary = r != nullptr ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary != nullptr ? primary : (c != nullptr ? PQerrorMessage(c) : "");
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back())) != 0) {
    message.pop_back();
  }
  if (message.empty()) message = "no answer from the server";
  if (connection_lost(c, sqlstate)) return unavailable(t.server, message);
  ErrorCode code = outside ? ErrorCode::kInvalidParams : ErrorCode::kInternalError;
  if (sqlstate == "23505" || sqlstate == "40001" || sqlstate == "40P01") {
    code = ErrorCode::kConflict;
  } else if (sqlstate == "42501") {
    code = ErrorCode::kPermissionDenied;
  }
  std::string text = "storage: " + std::string(what) + ": " + message;
  if (!sqlstate.empty()) text += " (SQLSTATE " + sqlstate + ")";
  if (outside && code == ErrorCode::kPermissionDenied) {
    text += " (an app's SQL reaches only its own schema)";
  }
  return Error::make(code, std::move(text));
}

Result<Conn> connect(const Target& t) {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [k, v] : t.params) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  Conn c(PQconnectdbParams(keys.data(), values.data(), 0));
  if (c == nullptr) return unavailable(t.server, "out of memory");
  if (PQstatus(c.get()) != CONNECTION_OK) return unavailable(t.server, PQerrorMessage(c.get()));
  // NOTICEs ("schema ... already exists, skipping") are not worth a line on stderr.
  PQsetNoticeProcessor(
      c.get(), [](void*, const char*) {}, nullptr);
  return c;
}

std::string quote_identifier(PGconn* c, std::string_view name) {
  char* quoted = PQescapeIdentifier(c, name.data(), name.size());
  if (quoted == nullptr) return "\"" + std::string(name) + "\"";  // [a-z0-9_] names only
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

std::string quote_literal(PGconn* c, std::string_view text) {
  char* quoted = PQescapeLiteral(c, text.data(), text.size());
  if (quoted == nullptr) return "'" + std::string(text) + "'";  // hex digits only
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

/// A 64-bit key for pg_advisory_xact_lock (FNV-1a: stable across daemons and builds).
std::int64_t lock_key(std::string_view name) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<std::int64_t>(h);
}

// --- parameters and rows -------------------------------------------------------------------

constexpr Oid kInt8 = 20;
constexpr Oid kFloat8 = 701;
constexpr Oid kBytea = 17;

/// Parameters as libpq takes them: integers as int8 text, doubles as float8 text (shortest
/// round trip), text untyped (the server infers it: a column's type, jsonb, a timestamp), blobs
/// as binary bytea, NULL.
class Bound {
 public:
  explicit Bound(const Params& params)
      : text_(params.size()),
        values_(params.size()),
        lengths_(params.size()),
        formats_(params.size()),
        types_(params.size()) {
    std::vector<bool> null(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::nullptr_t>) {
              null[i] = true;
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
              text_[i] = std::to_string(v);
              types_[i] = kInt8;
            } else if constexpr (std::is_same_v<T, double>) {
              types_[i] = kFloat8;
              if (std::isnan(v)) {
                text_[i] = "NaN";
              } else if (std::isinf(v)) {
                text_[i] = v > 0 ? "Infinity" : "-Infinity";
              } else {
                char buffer[64];
                const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
                text_[i].assign(buffer, end);
              }
            } else if constexpr (std::is_same_v<T, std::string>) {
              text_[i] = v;
            } else {
              text_[i] = v.bytes;
              types_[i] = kBytea;
              formats_[i] = 1;
            }
          },
          params[i]);
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      values_[i] = null[i] ? nullptr : text_[i].data();
      lengths_[i] = static_cast<int>(text_[i].size());
    }
  }
  int size() const { return static_cast<int>(values_.size()); }
  const Oid* types() const { return types_.data(); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  std::vector<std::string> text_;
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
  std::vector<Oid> types_;
};

double parse_double(std::string_view text) {
  double v = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), v).ec != std::errc()) {
    v = std::strtod(std::string(text).c_str(), nullptr);
  }
  return v;
}

Value cell(const PGresult* r, int row, int col) {
  if (PQgetisnull(r, row, col) != 0) return nullptr;
  const char* v = PQgetvalue(r, row, col);
  const auto length = static_cast<std::size_t>(PQgetlength(r, row, col));
  switch (PQftype(r, col)) {
    case 20:    // int8
    case 21:    // int2
    case 23:    // int4
    case 26: {  // oid
      std::int64_t x = 0;
      std::from_chars(v, v + length, x);
      return x;
    }
    case 700:   // float4
    case 701:   // float8
    case 1700:  // numeric
      return parse_double(std::string_view(v, length));
    case 16:  // bool
      return std::int64_t{v[0] == 't' ? 1 : 0};
    case 17: {  // bytea
      std::size_t size = 0;
      unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(v), &size);
      if (bytes == nullptr) return Blob{};
      Blob blob{std::string(reinterpret_cast<const char*>(bytes), size)};
      PQfreemem(bytes);
      return blob;
    }
    default:
      return std::string(v, length);
  }
}

std::vector<Row> rows_of(const PGresult* r) {
  std::vector<Row> rows;
  const int n = PQntuples(r);
  const int columns = PQnfields(r);
  rows.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Row row;
    row.reserve(static_cast<std::size_t>(columns));
    for (int j = 0; j < columns; ++j) row.push_back(cell(r, i, j));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::int64_t changed_rows(const PGresult* r) {
  const char* tuples = PQcmdTuples(const_cast<PGresult*>(r));
  std::int64_t n = 0;
  if (tuples != nullptr) std::from_chars(tuples, tuples + std::strlen(tuples), n);
  return n;
}

/// Runs one statement through the extended protocol (which refuses a second statement);
/// `number` turns its `?` into $n.
Result<PgResult> run(const Target& t, PGconn* c, std::string_view sql, const Params& params,
                     bool outside, bool number = true) {
  int count = 0;
  const std::string text = number ? number_placeholders(sql, count) : std::string(sql);
  if (static_cast<std::size_t>(count) != params.size()) {
    return Error::make(outside ? ErrorCode::kInvalidParams : ErrorCode::kInternalError,
                       "storage: the statement takes " + std::to_string(count) + " parameters, " +
                           std::to_string(params.size()) + " given");
  }
  const Bound bound(params);
  PgResult r(PQexecParams(c, text.c_str(), bound.size(), bound.types(), bound.values(),
                          bound.lengths(), bound.formats(), 0));
  if (!ok_status(r.get())) {
    return statement_error(t, c, r.get(), outside ? "the app's statement" : "running a statement",
                           outside);
  }
  return r;
}

/// Runs SQL through the simple protocol: several statements, no parameters.
Result<PgResult> run_script(const Target& t, PGconn* c, const std::string& sql,
                            std::string_view what) {
  PgResult r(PQexec(c, sql.c_str()));
  if (!ok_status(r.get())) return statement_error(t, c, r.get(), what, false);
  return r;
}

// --- the pool ------------------------------------------------------------------------------

/// A few connections to one target, opened when first needed and kept while they work.
class Pool {
 public:
  Pool(Target target, std::size_t max) : target_(std::move(target)), max_(max) {}

  const Target& target() const { return target_; }

  Result<Conn> acquire() {
    std::unique_lock lock(mutex_);
    for (;;) {
      while (!idle_.empty()) {
        Conn c = std::move(idle_.back());
        idle_.pop_back();
        if (PQstatus(c.get()) == CONNECTION_OK) return c;
        --open_;
      }
      if (open_ < max_) break;
      freed_.wait(lock);
    }
    ++open_;
    lock.unlock();
    auto c = connect(target_);
    if (!c.ok()) {
      lock.lock();
      --open_;
      freed_.notify_one();
    }
    return c;
  }

  /// Takes a connection back: kept if it works and holds no transaction, else closed.
  void release(Conn c) {
    std::lock_guard lock(mutex_);
    if (c != nullptr && PQstatus(c.get()) == CONNECTION_OK &&
        PQtransactionStatus(c.get()) == PQTRANS_IDLE) {
      idle_.push_back(std::move(c));
    } else {
      --open_;
    }
    freed_.notify_one();
  }

  /// After a lost connection: the idle ones most likely went with it (a restarted server), so
  /// the next call connects afresh instead of finding them dead one by one.
  void drop_idle() {
    std::lock_guard lock(mutex_);
    open_ -= idle_.size();
    idle_.clear();
    freed_.notify_all();
  }

 private:
  const Target target_;
  const std::size_t max_;
  std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<Conn> idle_;
  std::size_t open_ = 0;
};

constexpr std::size_t kPoolSize = 4;

/// One connection taken from a pool (or opened alone) for a few statements of hearth's own, in
/// a transaction when `begin` is called; rolled back unless committed.
class Session {
 public:
  static Result<Session> from(Pool& pool) {
    HEARTH_ASSIGN_OR_RETURN(Conn c, pool.acquire());
    return Session(&pool, pool.target(), std::move(c));
  }
  static Result<Session> alone(const Target& target) {
    HEARTH_ASSIGN_OR_RETURN(Conn c, connect(target));
    return Session(nullptr, target, std::move(c));
  }
  Session(Session&&) = default;
  Session& operator=(Session&&) = delete;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (conn_ == nullptr) return;
    if (PQtransactionStatus(conn_.get()) != PQTRANS_IDLE) {
      const PgResult rollback(PQexec(conn_.get(), "ROLLBACK"));
    }
    if (pool_ != nullptr) pool_->release(std::move(conn_));
  }

  std::string ident(std::string_view name) const { return quote_identifier(conn_.get(), name); }
  std::string literal(std::string_view text) const { return quote_literal(conn_.get(), text); }

  Result<PgResult> run(std::string_view sql, const Params& params = {}) {
    auto r = pg::run(target_, conn_.get(), sql, params, false);
    if (!r.ok() && database_unavailable(r.error()) && pool_ != nullptr) pool_->drop_idle();
    return r;
  }
  Result<bool> exists(std::string_view sql, const Params& params) {
    HEARTH_ASSIGN_OR_RETURN(auto r, run(sql, params));
    return PQntuples(r.get()) > 0;
  }
  /// BEGIN, then an advisory lock on `name` until the end of the transaction: what daemons
  /// starting at once would otherwise race on (CREATE SCHEMA IF NOT EXISTS, CREATE ROLE).
  Status begin_locked(std::string_view name) {
    HEARTH_RETURN_IF_ERROR(run("BEGIN"));
    HEARTH_RETURN_IF_ERROR(run("SELECT pg_advisory_xact_lock(?)", {lock_key(name)}));
    return Status{};
  }
  Status commit() {
    HEARTH_RETURN_IF_ERROR(run("COMMIT"));
    return Status{};
  }

 private:
  Session(Pool* pool, Target target, Conn conn)
      : pool_(pool), target_(std::move(target)), conn_(std::move(conn)) {}
  Pool* pool_;
  Target target_;
  Conn conn_;
};

// --- Database ------------------------------------------------------------------------------

class PgDatabase;

struct TxState {
  Conn conn;
  Pool* pool = nullptr;
  bool as_app = false;  ///< on the app role's connection
};

class PgTransaction final : public Transaction {
 public:
  PgTransaction(PgDatabase& db, std::thread::id thread) : db_(db), thread_(thread) {}
  ~PgTransaction() override;
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  Status commit() override;

 private:
  PgDatabase& db_;
  std::thread::id thread_;
  bool done_ = false;
};

/// The hearth table an app's migration transaction writes as the app's role (below).
constexpr std::string_view kAppMigrationRecords = "hearth_migrations";

/// A component's schema, or an app's: hearth's statements run as the engine's (admin) role with
/// the schema on the search path; an app's database also has a pool that logs in as the app's
/// role, for the app's SQL.
class PgDatabase final : public Database {
 public:
  PgDatabase(Target admin, std::string schema, std::optional<Target> app, std::string app_role)
      : admin_(std::move(admin), kPoolSize),
        schema_(std::move(schema)),
        role_(std::move(app_role)) {
    if (app) app_ = std::make_unique<Pool>(std::move(*app), kPoolSize);
  }

  Result<std::int64_t> execute(std::string_view sql, const Params& params) override {
    HEARTH_ASSIGN_OR_RETURN(auto r, on_connection(false, [&](const Target& t, PGconn* c) {
                              return run(t, c, sql, params, false);
                            }));
    return changed_rows(r.get());
  }

  Result<std::vector<Row>> query(std::string_view sql, const Params& params) override {
    HEARTH_ASSIGN_OR_RETURN(auto r, on_connection(false, [&](const Target& t, PGconn* c) {
                              return run(t, c, sql, params, false);
                            }));
    return rows_of(r.get());
  }

  /// On an app's database the transaction is on the app role's connection, so that an app
  /// migration (execute_untrusted_script, as the app) and hearth's record of it (execute) are
  /// one transaction; that record's table is therefore granted SELECT, INSERT to the app's role
  /// (see migrate). Everything else hearth does runs as the admin role.
  /// hearth's own transaction (its records of an app: evidence, artifacts, key-values).
  Result<std::unique_ptr<Transaction>> begin() override { return begin_as(false); }
  /// An app migration and its record, on the app role's connection.
  Result<std::unique_ptr<Transaction>> begin_untrusted() override {
    return begin_as(app_ != nullptr);
  }

  Status migrate(std::string_view component, const std::vector<Migration>& migrations) override {
    int newest = 0;
    for (const auto& m : migrations) newest = std::max(newest, m.version);
    // One lock for the schema (not only the component): it also covers creating
    // schema_migrations, which two components of one schema would otherwise race on.
    const std::int64_t key = lock_key("hearth-migrate:" + schema_);
    for (;;) {
      HEARTH_ASSIGN_OR_RETURN(auto tx, begin_as(false));
      HEARTH_RETURN_IF_ERROR(query("SELECT pg_advisory_xact_lock(?)", {key}));
      HEARTH_RETURN_IF_ERROR(
          execute("CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version "
                  "BIGINT NOT NULL, applied_at BIGINT NOT NULL, PRIMARY KEY (component, version))",
                  {}));
      if (!role_.empty()) HEARTH_RETURN_IF_ERROR(check_owned("schema_migrations"));
      HEARTH_ASSIGN_OR_RETURN(
          auto rows,
          query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE component = ?",
                {std::string(component)}));
      const auto current = std::get<std::int64_t>(rows.at(0).at(0));
      if (current > newest) {
        return Error::make(ErrorCode::kInternalError,
                           "storage: " + std::string(component) + " is at schema version " +
                               std::to_string(current) + ", newer than this hearth knows (" +
                               std::to_string(newest) + "): use the newer hearth");
      }
      const Migration* next = nullptr;
      for (const auto& m : migrations) {
        if (m.version > current && (next == nullptr || m.version < next->version)) next = &m;
      }
      if (next == nullptr) {
        if (!role_.empty()) HEARTH_RETURN_IF_ERROR(grant_record_table());
        return tx->commit();
      }
      const std::string sql =
          next->postgres.empty() ? translate_sqlite_types(next->sql) : next->postgres;
      auto state = current_tx();
      if (auto r = run_script(state->pool->target(), state->conn.get(), sql, "migration");
          !r.ok()) {
        if (database_unavailable(r.error())) return std::move(r).error();
        return Error::make(ErrorCode::kInternalError,
                           "storage: " + std::string(component) + " migration " +
                               std::to_string(next->version) + " failed: " + r.error().message);
      }
      const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      HEARTH_RETURN_IF_ERROR(
          execute("INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)",
                  {std::string(component), std::int64_t{next->version}, std::int64_t{now}}));
      HEARTH_RETURN_IF_ERROR(tx->commit());
    }
  }

  Result<std::vector<Row>> query_untrusted(std::string_view sql, const Params& params) override {
    HEARTH_RETURN_IF_ERROR(check_outside(sql));
    // One statement, as on SQLite (the extended protocol would refuse more, as a syntax error).
    if (split_statements(sql).size() > 1) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "storage: not allowed: more than one statement (an app's query is one "
                         "statement)");
    }
    HEARTH_ASSIGN_OR_RETURN(auto r, on_connection(true, [&](const Target& t, PGconn* c) {
                              return run(t, c, sql, params, true);
                            }));
    return rows_of(r.get());
  }

  Status execute_untrusted_script(std::string_view sql) override {
    HEARTH_RETURN_IF_ERROR(check_outside(""));
    // Statement by statement through the extended protocol, each checked as query_untrusted
    // checks its one. (A function body in the SQL standard's BEGIN ATOMIC form holds
    // semicolons outside quotes and is therefore cut apart: write it in $$ quotes.)
    for (const auto statement : split_statements(sql)) {
      HEARTH_RETURN_IF_ERROR(check_outside(statement));
      HEARTH_RETURN_IF_ERROR(on_connection(
          true, [&](const Target& t, PGconn* c) { return run(t, c, statement, {}, true, false); }));
    }
    return Status{};
  }

  Status end(std::thread::id thread, bool commit) {
    std::shared_ptr<TxState> state;
    {
      std::lock_guard lock(mutex_);
      auto it = transactions_.find(thread);
      if (it == transactions_.end()) {
        return Error::make(ErrorCode::kInternalError, "storage: transaction already ended");
      }
      state = std::move(it->second);
      transactions_.erase(it);
    }
    Status result;
    PGconn* c = state->conn.get();
    PgResult r(PQexec(c, commit ? "COMMIT" : "ROLLBACK"));
    if (commit) {
      if (!ok_status(r.get())) {
        result = statement_error(state->pool->target(), c, r.get(), "committing", false);
      } else if (std::string_view(PQcmdStatus(r.get())) != "COMMIT") {
        result = Error::make(ErrorCode::kInternalError,
                             "storage: the transaction was rolled back: a statement in it failed");
      }
    }
    if (connection_lost(c, "")) state->pool->drop_idle();
    state->pool->release(std::move(state->conn));
    return result;
  }

 private:
  std::shared_ptr<TxState> current_tx() {
    std::lock_guard lock(mutex_);
    auto it = transactions_.find(std::this_thread::get_id());
    return it == transactions_.end() ? nullptr : it->second;
  }

  /// Runs `f` on the calling thread's transaction, or on a connection of the pool (the app's
  /// for outside SQL).
  template <class F>
  Result<PgResult> on_connection(bool outside, F&& f) {
    if (auto tx = current_tx()) {
      if (outside && !tx->as_app) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "storage: an app's SQL cannot run inside hearth's own transaction");
      }
      auto r = f(tx->pool->target(), tx->conn.get());
      if (!r.ok() && database_unavailable(r.error())) tx->pool->drop_idle();
      return r;
    }
    Pool& pool = outside ? *app_ : admin_;
    HEARTH_ASSIGN_OR_RETURN(Conn c, pool.acquire());
    auto r = f(pool.target(), c.get());
    if (!r.ok() && database_unavailable(r.error())) pool.drop_idle();
    pool.release(std::move(c));
    return r;
  }

  Result<std::unique_ptr<Transaction>> begin_as(bool as_app) {
    const auto thread = std::this_thread::get_id();
    if (current_tx() != nullptr) {
      return Error::make(ErrorCode::kInternalError,
                         "storage: this thread already holds a transaction of this database");
    }
    Pool& pool = as_app ? *app_ : admin_;
    HEARTH_ASSIGN_OR_RETURN(Conn c, pool.acquire());
    if (auto r = run_script(pool.target(), c.get(), "BEGIN ISOLATION LEVEL READ COMMITTED",
                            "starting a transaction");
        !r.ok()) {
      if (database_unavailable(r.error())) pool.drop_idle();
      pool.release(std::move(c));
      return std::move(r).error();
    }
    auto state = std::make_shared<TxState>();
    state->conn = std::move(c);
    state->pool = &pool;
    state->as_app = as_app;
    {
      std::lock_guard lock(mutex_);
      transactions_[thread] = std::move(state);
    }
    return std::unique_ptr<Transaction>(std::make_unique<PgTransaction>(*this, thread));
  }

  Status check_outside(std::string_view sql) const {
    if (app_ == nullptr) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "storage: hearth's own databases run no SQL written outside hearth "
                         "(only an app's database does)");
    }
    if (refused_outside_statement(sql)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "storage: not allowed: transaction, session, COPY and procedural "
                         "statements are hearth's, not an app's");
    }
    return Status{};
  }

  /// hearth's tables in an app's schema must be the admin role's: one the app made under the
  /// same name first (a trigger on it would run as admin) is refused.
  Status check_owned(std::string_view table) {
    HEARTH_ASSIGN_OR_RETURN(
        auto rows, query("SELECT tableowner = current_user FROM pg_catalog.pg_tables WHERE "
                         "schemaname = current_schema() AND tablename = ?",
                         {std::string(table)}));
    if (!rows.empty() && std::get<std::int64_t>(rows[0][0]) == 0) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "storage: " + std::string(table) + " in " + schema_ +
                             " is not hearth's (the app made it): refusing to use it");
    }
    return Status{};
  }

  /// The trade-off of begin() on an app's database: hearth's record of an app migration is
  /// written as the app's role, so the app's SQL can read that table and add rows to it (it can
  /// mark one of its own migrations applied; nothing of hearth's or another app's).
  Status grant_record_table() {
    const std::string table(kAppMigrationRecords);
    HEARTH_ASSIGN_OR_RETURN(auto rows,
                            query("SELECT to_regclass(?) IS NOT NULL", {schema_ + "." + table}));
    if (rows.empty() || std::get<std::int64_t>(rows[0][0]) == 0) return Status{};
    HEARTH_RETURN_IF_ERROR(check_owned(table));
    auto state = current_tx();
    PGconn* c = state->conn.get();
    HEARTH_RETURN_IF_ERROR(run_script(state->pool->target(), c,
                                      "GRANT SELECT, INSERT ON TABLE " +
                                          quote_identifier(c, table) + " TO " +
                                          quote_identifier(c, role_),
                                      "granting the migration records"));
    return Status{};
  }

  Pool admin_;
  std::unique_ptr<Pool> app_;
  const std::string schema_;
  const std::string role_;
  std::mutex mutex_;
  std::map<std::thread::id, std::shared_ptr<TxState>> transactions_;
};

PgTransaction::~PgTransaction() {
  if (!done_) (void)db_.end(thread_, false);
}

Status PgTransaction::commit() {
  if (done_) return Error::make(ErrorCode::kInternalError, "storage: transaction already ended");
  done_ = true;
  return db_.end(thread_, true);
}

// --- Bus -----------------------------------------------------------------------------------

constexpr std::string_view kChannel = "hearth";
/// NOTIFY's payload must be shorter than 8000 bytes; the envelope takes the rest.
constexpr std::size_t kMaxNotice = 7900;

/// LISTEN on one connection of its own, read by a thread that waits on its socket.
class PgBus final : public Bus {
 public:
  PgBus(Target target, Pool& pool) : target_(std::move(target)), pool_(pool) {}
  PgBus(const PgBus&) = delete;
  PgBus& operator=(const PgBus&) = delete;
  ~PgBus() override {
    if (thread_.joinable()) {
      const std::uint64_t one = 1;
      (void)!::write(wake_.get(), &one, sizeof one);
      thread_.join();
    }
  }

  /// Listens now (a notice published right after open reaches this daemon), then reads on.
  Status start() {
    wake_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake_) {
      return Error::make(ErrorCode::kInternalError,
                         std::string("storage: eventfd: ") + std::strerror(errno));
    }
    HEARTH_ASSIGN_OR_RETURN(conn_, listen());
    thread_ = std::thread([this] { read_loop(); });
    return Status{};
  }

  Status publish(std::string_view topic, std::string_view payload) override {
    const std::string notice =
        boost::json::serialize(boost::json::object{{"d", id_}, {"t", topic}, {"p", payload}});
    if (notice.size() >= kMaxNotice) {
      return Error::make(ErrorCode::kInvalidParams,
                         "storage: a notice must be shorter than " + std::to_string(kMaxNotice) +
                             " bytes with its envelope (this one has " +
                             std::to_string(notice.size()) + "): say what changed, not the data");
    }
    HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(pool_));
    HEARTH_RETURN_IF_ERROR(
        session.run("SELECT pg_notify('" + std::string(kChannel) + "', ?)", {notice}));
    return Status{};
  }

  std::uint64_t subscribe(std::string topic, Handler handler) override {
    std::lock_guard lock(mutex_);
    const auto id = next_++;
    handlers_.emplace(id, std::make_pair(std::move(topic), std::move(handler)));
    return id;
  }

  void unsubscribe(std::uint64_t id) override {
    std::lock_guard lock(mutex_);
    handlers_.erase(id);
    resync_.erase(id);
  }

  std::uint64_t on_resync(std::function<void()> handler) override {
    std::lock_guard lock(mutex_);
    const auto id = next_++;
    resync_.emplace(id, std::move(handler));
    return id;
  }

 private:
  Result<Conn> listen() {
    HEARTH_ASSIGN_OR_RETURN(Conn c, connect(target_));
    HEARTH_RETURN_IF_ERROR(
        run_script(target_, c.get(), "LISTEN " + std::string(kChannel), "listening"));
    return c;
  }

  /// Whether the destructor asked the thread to stop, waiting up to `timeout` for it.
  bool stopping(std::chrono::milliseconds timeout) const {
    pollfd fd{wake_.get(), POLLIN, 0};
    return ::poll(&fd, 1, static_cast<int>(timeout.count())) > 0;
  }

  void read_loop() {
    constexpr std::chrono::milliseconds kFirst{100};
    constexpr std::chrono::milliseconds kMost{2000};
    auto backoff = kFirst;
    for (;;) {
      if (conn_ == nullptr) {
        if (stopping(backoff)) return;
        auto c = listen();
        if (!c.ok()) {
          backoff = std::min(backoff * 2, kMost);
          continue;
        }
        conn_ = std::move(c).value();
        backoff = kFirst;
        resync();
      }
      std::array<pollfd, 2> fds{pollfd{PQsocket(conn_.get()), POLLIN, 0},
                                pollfd{wake_.get(), POLLIN, 0}};
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;
      if (PQconsumeInput(conn_.get()) == 0 || PQstatus(conn_.get()) != CONNECTION_OK) {
        conn_.reset();  // lost: connect again, then tell the components to read afresh
        continue;
      }
      while (PGnotify* n = PQnotifies(conn_.get())) {
        deliver(n->extra != nullptr ? n->extra : "");
        PQfreemem(n);
      }
    }
  }

  void deliver(std::string_view text) {
    boost::system::error_code ec;
    const auto value = boost::json::parse(text, ec);
    const auto* o = value.if_object();
    if (ec || o == nullptr) return;  // not one of hearth's
    const auto* from = o->if_contains("d");
    const auto* topic = o->if_contains("t");
    const auto* payload = o->if_contains("p");
    if (from == nullptr || !from->is_string() || topic == nullptr || !topic->is_string() ||
        payload == nullptr || !payload->is_string() || from->get_string() == id_) {
      return;
    }
    Notice notice{std::string(topic->get_string()), std::string(payload->get_string())};
    std::vector<Handler> calls;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [id, entry] : handlers_) {
        if (entry.first == notice.topic) calls.push_back(entry.second);
      }
    }
    for (const auto& call : calls) call(notice);
  }

  void resync() {
    std::vector<std::function<void()>> calls;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [id, call] : resync_) calls.push_back(call);
    }
    for (const auto& call : calls) call();
  }

  const Target target_;
  Pool& pool_;
  const std::string id_ = random_hex(8);  ///< this daemon's, to skip its own notices
  Fd wake_;
  Conn conn_;  // the bus thread's, once started
  std::thread thread_;
  std::mutex mutex_;
  std::uint64_t next_ = 1;
  std::map<std::uint64_t, std::pair<std::string, Handler>> handlers_;
  std::map<std::uint64_t, std::function<void()>> resync_;
};

// --- Engine --------------------------------------------------------------------------------

std::string hmac_hex(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &size);
  return to_hex(std::string_view(reinterpret_cast<const char*>(out), size));
}

/// What an app's server-postgresql storage is called.
struct AppNames {
  std::string role;
  std::string schema;
  std::string database;  ///< dedicated-database: its own; else empty (the engine's)
};

Result<AppNames> app_names(const AppPlacement& app) {
  if (app.app.empty()) return Error::make(ErrorCode::kInvalidParams, "storage: no app name");
  AppNames names;
  names.role = bounded_identifier("hearth_app_", app.app, 50);
  if (app.isolation.empty() || app.isolation == "per-app-schema" ||
      app.isolation == "per-app-database") {
    names.schema = names.role;
  } else if (app.isolation == "per-tenant-schema") {
    names.schema =
        bounded_identifier(names.role + "__", app.tenant.empty() ? "default" : app.tenant, 63);
  } else if (app.isolation == "dedicated-database") {
    names.schema = names.role;
    names.database = names.role;
  } else {
    return Error::make(ErrorCode::kInvalidParams,
                       "storage: app " + app.app + ": unknown storage.isolation '" + app.isolation +
                           "' (per-app-database, per-app-schema, per-tenant-schema or "
                           "dedicated-database)");
  }
  return names;
}

Status check_component(std::string_view component) {
  const bool valid = !component.empty() && component.size() <= 48 &&
                     std::all_of(component.begin(), component.end(), [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                     });
  if (!valid) {
    return Error::make(
        ErrorCode::kInternalError,
        "storage: a component's name is [a-z0-9_]+ (at most 48): '" + std::string(component) + "'");
  }
  return Status{};
}

Status remove_sqlite_files(const std::filesystem::path& file) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(file.string() + suffix, ec);
    if (ec) {
      return Error::make(ErrorCode::kInternalError,
                         "storage: cannot remove " + file.string() + suffix + ": " + ec.message());
    }
  }
  return Status{};
}

class PgEngine final : public Engine {
 public:
  PgEngine(std::string url, Target base, EngineOptions options)
      : url_(std::move(url)),
        base_(std::move(base)),
        options_(std::move(options)),
        admin_(base_, kPoolSize),
        bus_(base_, admin_) {}

  Status start() {
    // Connected and checked now: a wrong URL shows at start-up, not at the first request.
    HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(admin_));
    HEARTH_RETURN_IF_ERROR(session.run("SELECT 1"));
    return bus_.start();
  }

  std::string_view kind() const override { return "postgresql"; }
  bool shared() const override { return true; }

  Result<std::unique_ptr<Database>> open(std::string_view component,
                                         const std::filesystem::path& /*sqlite_file*/,
                                         SqliteOptions /*options*/) override {
    HEARTH_RETURN_IF_ERROR(check_component(component));
    const std::string schema = "hearth_" + std::string(component);
    HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(admin_));
    HEARTH_RETURN_IF_ERROR(make_schema(session, schema, ""));
    return std::unique_ptr<Database>(std::make_unique<PgDatabase>(
        with(base_, {{"options", search_path_option(base_, schema)}}), schema, std::nullopt, ""));
  }

  Result<std::unique_ptr<Database>> open_app(const AppPlacement& app) override {
    if (app.placement.empty() || app.placement == "local-sqlite") {
      return open_sqlite(app.sqlite_file, app.sqlite);
    }
    if (app.placement != "server-postgresql") return unknown_placement(app);
    if (options_.app_role_secret.empty()) {
      return Error::make(ErrorCode::kInternalError,
                         "storage: app " + app.app +
                             " wants server-postgresql storage, but hearth was given no key to "
                             "derive its role's password from (EngineOptions::app_role_secret)");
    }
    HEARTH_ASSIGN_OR_RETURN(const auto names, app_names(app));
    const std::string password = hmac_hex(options_.app_role_secret, names.role);
    {
      // Roles are the cluster's: made (or their password set again) under a lock.
      HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(admin_));
      HEARTH_RETURN_IF_ERROR(session.begin_locked("hearth-app-role:" + names.role));
      HEARTH_ASSIGN_OR_RETURN(
          const bool exists,
          session.exists("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ?", {names.role}));
      HEARTH_RETURN_IF_ERROR(session.run(
          std::string(exists ? "ALTER ROLE " : "CREATE ROLE ") + session.ident(names.role) +
          " WITH LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS "
          "PASSWORD " +
          session.literal(password)));
      HEARTH_RETURN_IF_ERROR(session.commit());
    }
    Target admin = base_;
    if (!names.database.empty()) {
      HEARTH_RETURN_IF_ERROR(make_database(names));
      admin = with(base_, {{"dbname", names.database}});
    }
    {
      HEARTH_ASSIGN_OR_RETURN(
          auto session, names.database.empty() ? Session::from(admin_) : Session::alone(admin));
      HEARTH_RETURN_IF_ERROR(make_schema(session, names.schema, names.role));
    }
    Target app_target =
        with(admin, {{"user", names.role},
                     {"password", password},
                     {"options", search_path_option(admin, names.schema + ",pg_catalog")}});
    return std::unique_ptr<Database>(std::make_unique<PgDatabase>(
        with(admin, {{"options", search_path_option(admin, names.schema)}}), names.schema,
        std::move(app_target), names.role));
  }

  Status drop_app(const AppPlacement& app) override {
    if (app.placement.empty() || app.placement == "local-sqlite") {
      return remove_sqlite_files(app.sqlite_file);
    }
    if (app.placement != "server-postgresql") return unknown_placement(app);
    HEARTH_ASSIGN_OR_RETURN(const auto names, app_names(app));
    HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(admin_));
    if (!names.database.empty()) {
      HEARTH_RETURN_IF_ERROR(session.run("DROP DATABASE IF EXISTS " +
                                         session.ident(names.database) + " WITH (FORCE)"));
    }
    // Every schema of the app (each tenant's): those named after its role that its role may use.
    HEARTH_ASSIGN_OR_RETURN(
        auto schemas,
        session.run("SELECT n.nspname FROM pg_catalog.pg_namespace n WHERE (n.nspname = ? OR "
                    "starts_with(n.nspname, ? || '__')) AND EXISTS (SELECT 1 FROM "
                    "pg_catalog.pg_roles r WHERE r.rolname = ? AND "
                    "has_schema_privilege(r.oid, n.oid, 'USAGE'))",
                    {names.role, names.role, names.role}));
    for (const auto& row : rows_of(schemas.get())) {
      HEARTH_RETURN_IF_ERROR(session.run(
          "DROP SCHEMA IF EXISTS " + session.ident(std::get<std::string>(row[0])) + " CASCADE"));
    }
    HEARTH_ASSIGN_OR_RETURN(
        const bool role,
        session.exists("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ?", {names.role}));
    if (role) {
      HEARTH_RETURN_IF_ERROR(session.run("DROP OWNED BY " + session.ident(names.role)));
      HEARTH_RETURN_IF_ERROR(session.run("DROP ROLE IF EXISTS " + session.ident(names.role)));
    }
    return Status{};
  }

  Bus& bus() override { return bus_; }
  std::string describe() const override { return mask_password(url_); }

 private:
  static Error unknown_placement(const AppPlacement& app) {
    return Error::make(ErrorCode::kInvalidParams,
                       "storage: app " + app.app + ": unknown storage.placement '" + app.placement +
                           "' (local-sqlite or server-postgresql)");
  }

  /// A schema owned by the admin role. PUBLIC gets nothing on it (a new schema grants PUBLIC
  /// nothing; the REVOKE keeps it so whoever made it): an app's role reaches hearth's component
  /// schemas only through grants, and it has none. An app's role gets USAGE and CREATE on its
  /// own schema: it makes and owns its tables there, and cannot drop hearth's (which the admin
  /// role owns). CONNECT on the database itself is the operator's to restrict (REVOKE ALL ON
  /// DATABASE ... FROM PUBLIC); it gives an app's role nothing here beyond reading the catalog.
  static Status make_schema(Session& session, const std::string& schema, const std::string& role) {
    HEARTH_RETURN_IF_ERROR(session.begin_locked("hearth-schema:" + schema));
    const std::string s = session.ident(schema);
    HEARTH_RETURN_IF_ERROR(session.run("CREATE SCHEMA IF NOT EXISTS " + s));
    HEARTH_RETURN_IF_ERROR(session.run("REVOKE ALL ON SCHEMA " + s + " FROM PUBLIC"));
    if (!role.empty()) {
      const std::string r = session.ident(role);
      HEARTH_RETURN_IF_ERROR(session.run("GRANT USAGE, CREATE ON SCHEMA " + s + " TO " + r));
      HEARTH_RETURN_IF_ERROR(session.run("REVOKE ALL ON SCHEMA public FROM " + r));
    }
    return session.commit();
  }

  /// dedicated-database: a database of the app's own (owned by the admin role), which only
  /// its role (and the admin) may connect to. CREATE DATABASE runs outside a transaction.
  Status make_database(const AppNames& names) {
    HEARTH_ASSIGN_OR_RETURN(auto session, Session::from(admin_));
    const std::string d = session.ident(names.database);
    HEARTH_ASSIGN_OR_RETURN(
        const bool exists,
        session.exists("SELECT 1 FROM pg_catalog.pg_database WHERE datname = ?", {names.database}));
    if (!exists) {
      if (auto made = session.run("CREATE DATABASE " + d); !made.ok()) {
        // Another daemon may have made it just now.
        HEARTH_ASSIGN_OR_RETURN(
            const bool now, session.exists("SELECT 1 FROM pg_catalog.pg_database WHERE datname = ?",
                                           {names.database}));
        if (!now) return std::move(made).error();
      }
    }
    HEARTH_RETURN_IF_ERROR(session.run("REVOKE ALL ON DATABASE " + d + " FROM PUBLIC"));
    HEARTH_RETURN_IF_ERROR(
        session.run("GRANT CONNECT ON DATABASE " + d + " TO " + session.ident(names.role)));
    return Status{};
  }

  const std::string url_;
  const Target base_;
  const EngineOptions options_;
  Pool admin_;  // hearth's own DDL and the bus's publishing
  PgBus bus_;   // after admin_: destroyed before it
};

}  // namespace

// --- the parts tested on their own ---------------------------------------------------------

std::string number_placeholders(std::string_view sql, int& count) {
  count = 0;
  std::string out;
  out.reserve(sql.size() + 8);
  std::size_t i = 0;
  while (i < sql.size()) {
    if (const auto j = skip_quoted(sql, i); j != i) {
      out.append(sql.substr(i, j - i));
      i = j;
    } else if (sql[i] == '?') {
      out += '$';
      out += std::to_string(++count);
      ++i;
    } else {
      out += sql[i++];
    }
  }
  return out;
}

std::string translate_sqlite_types(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 32);
  std::size_t i = 0;
  while (i < sql.size()) {
    if (const auto j = skip_quoted(sql, i); j != i) {
      out.append(sql.substr(i, j - i));
      i = j;
      continue;
    }
    const char c = sql[i];
    const bool starts_word = (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') &&
                             (i == 0 || !name_char(sql[i - 1]));
    if (!starts_word) {
      out += c;
      ++i;
      continue;
    }
    std::size_t end = 0;
    const std::string word = upper_word(sql, i, end);
    if (word == "INTEGER") {
      std::size_t primary_end = 0;
      std::size_t key_end = 0;
      std::size_t auto_end = 0;
      if (upper_word(sql, skip_blank(sql, end), primary_end) == "PRIMARY" &&
          upper_word(sql, skip_blank(sql, primary_end), key_end) == "KEY") {
        out += "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
        const bool autoincrement =
            upper_word(sql, skip_blank(sql, key_end), auto_end) == "AUTOINCREMENT";
        i = autoincrement ? auto_end : key_end;
        continue;
      }
      out += "BIGINT";
    } else if (word == "REAL") {
      out += "DOUBLE PRECISION";
    } else if (word == "BLOB") {
      out += "BYTEA";
    } else if (word == "AUTOINCREMENT") {
      // (SQLite's; PostgreSQL's identity columns above number rows)
    } else {
      out.append(sql.substr(i, end - i));
    }
    i = end;
  }
  return out;
}

std::string mask_password(std::string_view url) {
  std::string out(url);
  if (const auto scheme = out.find("://"); scheme != std::string::npos) {
    const auto start = scheme + 3;
    auto end = out.find_first_of("/?", start);
    if (end == std::string::npos) end = out.size();
    const std::string_view authority = std::string_view(out).substr(start, end - start);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
      if (const auto colon = authority.find(':'); colon < at) {
        out.replace(start + colon + 1, at - colon - 1, "***");
      }
    }
  }
  for (std::size_t pos = 0; (pos = out.find("password=", pos)) != std::string::npos;) {
    pos += 9;
    auto end = out.find_first_of("& ", pos);
    if (end == std::string::npos) end = out.size();
    out.replace(pos, end - pos, "***");
  }
  return out;
}

std::string bounded_identifier(std::string_view prefix, std::string_view name, std::size_t max) {
  std::string clean;
  for (const char c : name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    clean += (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '_'
                 ? lower
                 : '_';
  }
  if (clean == name && !clean.empty() && prefix.size() + clean.size() <= max) {
    return std::string(prefix) + clean;
  }
  const std::size_t keep = max > prefix.size() + 9 ? max - prefix.size() - 9 : 0;
  return std::string(prefix) + clean.substr(0, keep) + "_" + sha256_hex(name).substr(0, 8);
}

bool refused_outside_statement(std::string_view sql) {
  std::size_t end = 0;
  const std::size_t start = skip_blank(sql, 0);
  const std::string first = upper_word(sql, start, end);
  static constexpr std::string_view kRefused[] = {
      "SET",       "RESET",   "BEGIN",   "START",    "COMMIT",  "ROLLBACK",  "ABORT", "END",
      "SAVEPOINT", "RELEASE", "LISTEN",  "UNLISTEN", "NOTIFY",  "COPY",      "DO",    "CALL",
      "LOAD",      "VACUUM",  "DISCARD", "PREPARE",  "EXECUTE", "DEALLOCATE"};
  if (std::find(std::begin(kRefused), std::end(kRefused), first) != std::end(kRefused)) {
    return true;
  }
  if (first == "ALTER") {
    std::size_t second_end = 0;
    const std::string second = upper_word(sql, skip_blank(sql, end), second_end);
    return second == "SYSTEM" || second == "ROLE" || second == "USER" || second == "DATABASE";
  }
  return false;
}

Result<std::unique_ptr<Engine>> open_postgres_engine(std::string_view url, EngineOptions options) {
  char* why = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(std::string(url).c_str(), &why);
  if (parsed == nullptr) {
    std::string reason = why != nullptr ? why : "out of memory";
    PQfreemem(why);
    while (!reason.empty() && std::isspace(static_cast<unsigned char>(reason.back())) != 0) {
      reason.pop_back();
    }
    return Error::make(ErrorCode::kInvalidParams, "storage: not a PostgreSQL connection URL (" +
                                                      mask_password(url) + "): " + reason);
  }
  Target base;
  for (const PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    if (o->val != nullptr) base.params.emplace_back(o->keyword, o->val);
  }
  PQconninfoFree(parsed);
  std::vector<std::pair<std::string, std::string>> defaults;
  if (param_of(base, "application_name").empty())
    defaults.emplace_back("application_name", "hearth");
  if (param_of(base, "connect_timeout").empty()) defaults.emplace_back("connect_timeout", "10");
  base = with(base, defaults);
  auto engine = std::make_unique<PgEngine>(std::string(url), std::move(base), std::move(options));
  HEARTH_RETURN_IF_ERROR(engine->start());
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace hearth::storage::pg
