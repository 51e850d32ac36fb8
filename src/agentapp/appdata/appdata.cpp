#include "agentapp/appdata/appdata.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "agentapp/records/records.hpp"
#include "common/base64.hpp"
#include "common/clock.hpp"
#include "common/sha256.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

const std::vector<storage::Migration>& own_tables() {
  static const std::vector<storage::Migration> kTables = {
      {1,
       "CREATE TABLE hearth_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
       "CREATE TABLE hearth_migrations (name TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
       "applied_at TEXT NOT NULL);"},
  };
  return kTables;
}

const json::value* at_path(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (const auto key : path) {
    if (cur == nullptr) return nullptr;
    v = cur->if_contains(key);
    if (v == nullptr) return nullptr;
    cur = v->is_object() ? &v->get_object() : nullptr;
  }
  return v;
}

/// The migrations folder the manifest names, inside the package; empty when none.
Result<fs::path> migrations_folder(const fs::path& package, const json::object& fm) {
  const json::value* named = at_path(fm, {"storage", "migrations"});
  if (named == nullptr) named = at_path(fm, {"runtimePackage", "storage", "migrations"});
  if (named == nullptr) return fs::path();
  if (!named->is_string()) {
    return Error::make(ErrorCode::kInvalidParams, "storage.migrations must be a path");
  }
  const fs::path rel = fs::path(std::string(named->get_string())).lexically_normal();
  if (rel.is_absolute() || rel.empty() || *rel.begin() == "..") {
    return Error::make(ErrorCode::kInvalidParams,
                       "storage.migrations must be a folder inside the package: " +
                           std::string(named->get_string()));
  }
  return package / rel;
}

storage::Value to_param(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return nullptr;
    case json::kind::bool_:
      return std::int64_t{v.get_bool() ? 1 : 0};
    case json::kind::int64:
      return v.get_int64();
    case json::kind::uint64:
      return static_cast<std::int64_t>(v.get_uint64());
    case json::kind::double_:
      return v.get_double();
    case json::kind::string:
      return std::string(v.get_string());
    default:
      return json::serialize(v);  // arrays and objects travel as JSON text
  }
}

json::value from_column(const storage::Value& v) {
  return std::visit(
      [](const auto& x) -> json::value {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, storage::Blob>) {
          return json::object{{"blobBytes", static_cast<std::int64_t>(x.bytes.size())}};
        } else {
          return json::value(x);
        }
      },
      v);
}

/// Makes the app's data folder, private to hearth's user.
Status make_data_folder(const fs::path& data_dir) {
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot create " + data_dir.string() + ": " + ec.message());
  }
  ::chmod(data_dir.c_str(), 0700);
  return {};
}

}  // namespace

storage::AppPlacement app_placement(std::string_view app, const json::object& front_matter,
                                    const fs::path& data_dir) {
  const json::value* block = at_path(front_matter, {"storage"});
  if (block == nullptr || !block->is_object()) {
    block = at_path(front_matter, {"runtimePackage", "storage"});
  }
  const auto text = [block](std::string_view key) {
    const json::value* v =
        block != nullptr && block->is_object() ? block->get_object().if_contains(key) : nullptr;
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  storage::AppPlacement placement;
  placement.app = std::string(app);
  placement.placement = text("placement") == kServerPostgresql ? std::string(kServerPostgresql)
                                                               : std::string(kLocalSqlite);
  placement.isolation = text("isolation");
  if (placement.placement == kServerPostgresql && placement.isolation.empty()) {
    placement.isolation = "per-app-schema";
  }
  placement.sqlite_file = data_dir / "app.db";
  placement.sqlite.max_bytes = AppData::kDefaultQuota;
  return placement;
}

Result<std::unique_ptr<AppData>> AppData::prepared(std::unique_ptr<storage::Database> db) {
  HEARTH_RETURN_IF_ERROR(db->migrate("hearth-app-data", own_tables()));
  HEARTH_RETURN_IF_ERROR(prepare_records(*db));
  return std::unique_ptr<AppData>(new AppData(std::move(db)));
}

Result<std::unique_ptr<AppData>> AppData::open(const fs::path& data_dir, std::int64_t quota) {
  HEARTH_RETURN_IF_ERROR(make_data_folder(data_dir));
  storage::SqliteOptions options;
  options.max_bytes = quota;
  HEARTH_ASSIGN_OR_RETURN(auto db, storage::open_sqlite(data_dir / "app.db", options));
  return prepared(std::move(db));
}

Result<std::unique_ptr<AppData>> AppData::open(storage::Engine& engine,
                                               const storage::AppPlacement& placement) {
  if (placement.placement != kServerPostgresql) {
    HEARTH_RETURN_IF_ERROR(make_data_folder(placement.sqlite_file.parent_path()));
  }
  HEARTH_ASSIGN_OR_RETURN(auto db, engine.open_app(placement));
  return prepared(std::move(db));
}

Result<std::vector<fs::path>> migration_files(const fs::path& package,
                                              const json::object& front_matter) {
  HEARTH_ASSIGN_OR_RETURN(const fs::path folder, migrations_folder(package, front_matter));
  std::vector<fs::path> files;
  if (folder.empty()) return files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".sql") files.push_back(e.path());
  }
  if (ec) {
    return Error::make(ErrorCode::kInvalidParams, "cannot read the migrations folder " +
                                                      folder.string() + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<json::array> AppData::migrate(const fs::path& package, const json::object& front_matter) {
  HEARTH_ASSIGN_OR_RETURN(const auto files, migration_files(package, front_matter));
  json::array applied_now;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string sql = text.str();
    const std::string name = file.filename().string();
    const std::string hash = sha256_hex(sql);
    HEARTH_ASSIGN_OR_RETURN(
        auto rows, db_->query("SELECT sha256 FROM hearth_migrations WHERE name = ?", {name}));
    if (!rows.empty()) {
      if (std::get<std::string>(rows[0][0]) != hash) {
        return Error::make(ErrorCode::kConflict,
                           "migration " + name +
                               " was applied already and its file has changed since; a "
                               "migration must never change once applied");
      }
      continue;
    }
    HEARTH_ASSIGN_OR_RETURN(auto tx, db_->begin_untrusted());
    if (auto r = db_->execute_untrusted_script(sql); !r.ok()) {
      return Error::make(r.error().code, "migration " + name + " failed, nothing of it applied (" +
                                             std::to_string(applied_now.size()) +
                                             " applied before it): " + r.error().message);
    }
    HEARTH_RETURN_IF_ERROR(
        db_->execute("INSERT INTO hearth_migrations (name, sha256, applied_at) VALUES (?, ?, ?)",
                     {name, hash, utc_now()}));
    HEARTH_RETURN_IF_ERROR(tx->commit());
    applied_now.emplace_back(name);
  }
  return applied_now;
}

Result<json::array> AppData::applied() {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows,
      db_->query("SELECT name, sha256, applied_at FROM hearth_migrations ORDER BY name", {}));
  json::array out;
  for (const auto& row : rows) {
    out.emplace_back(json::object{{"name", std::get<std::string>(row[0])},
                                  {"sha256", std::get<std::string>(row[1])},
                                  {"appliedAt", std::get<std::string>(row[2])}});
  }
  return out;
}

Result<json::value> AppData::get(std::string_view key) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT value FROM hearth_kv WHERE key = ?", {std::string(key)}));
  if (rows.empty()) return json::value(nullptr);
  auto parsed = json::parse_text(std::get<std::string>(rows[0][0]));
  if (!parsed.ok()) return std::move(parsed).error();
  return std::move(parsed.value());
}

Status AppData::put(std::string_view key, const json::value& value) {
  auto r = db_->execute(
      "INSERT INTO hearth_kv (key, value) VALUES (?, ?) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      {std::string(key), json::serialize(value)});
  if (!r.ok()) {
    Error error = std::move(r).error();
    // The storage layer's own writes fail as internal errors; one the quota refused is the
    // app's doing, refused as its queries are (data {"reason": "quota"}).
    if (storage::quota_full(error)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "the app's storage quota is full: " + error.message,
                         std::move(error.data));
    }
    return error;
  }
  return {};
}

Result<json::array> AppData::query(std::string_view sql, const json::array& params) {
  storage::Params bound;
  bound.reserve(params.size());
  for (const auto& p : params) bound.push_back(to_param(p));
  HEARTH_ASSIGN_OR_RETURN(auto rows, db_->query_untrusted(sql, bound));
  json::array out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    json::array r;
    r.reserve(row.size());
    for (const auto& v : row) r.push_back(from_column(v));
    out.emplace_back(std::move(r));
  }
  return out;
}

namespace {

/// A name in SQL, quoted ("a""b").
std::string sql_name(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

/// A table's name as a file name: anything but [A-Za-z0-9._-] becomes '_'.
std::string file_name_of(std::string_view table) {
  std::string out;
  for (const char c : table) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out;
}

json::value exported(const storage::Value& v) {
  if (const auto* blob = std::get_if<storage::Blob>(&v)) {
    return json::object{{"base64", base64_encode(blob->bytes)}};
  }
  return from_column(v);
}

std::string text_of(const storage::Value& v) {
  const auto* s = std::get_if<std::string>(&v);
  return s != nullptr ? *s : std::string();
}

}  // namespace

Result<std::vector<ExportedFile>> AppData::export_tables(std::string_view engine_kind) {
  const bool postgres = engine_kind == "postgresql";
  // hearth's own tables (hearth_*, schema_migrations) are refused to the app's SQL: not listed.
  const std::string_view tables_sql =
      postgres ? "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                 "current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE "
                 "'hearth\\_%' ESCAPE '\\' AND table_name <> 'schema_migrations' ORDER BY "
                 "table_name"
               : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                 "'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'hearth\\_%' ESCAPE '\\' AND "
                 "name <> 'schema_migrations' ORDER BY name";
  HEARTH_ASSIGN_OR_RETURN(auto tables, db_->query_untrusted(tables_sql, {}));
  std::vector<ExportedFile> files;
  json::array listed;
  std::set<std::string> names;
  for (const auto& t : tables) {
    const std::string table = text_of(t.at(0));
    HEARTH_ASSIGN_OR_RETURN(
        auto column_rows,
        postgres ? db_->query_untrusted(
                       "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                       "current_schema() AND table_name = ? ORDER BY ordinal_position",
                       {table})
                 : db_->query_untrusted("PRAGMA table_info(" + sql_name(table) + ")", {}));
    json::array columns;
    for (const auto& c : column_rows) columns.emplace_back(text_of(c.at(postgres ? 0 : 1)));
    HEARTH_ASSIGN_OR_RETURN(auto rows,
                            db_->query_untrusted("SELECT * FROM " + sql_name(table), {}));
    std::string lines;
    for (const auto& row : rows) {
      json::object o;
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::string column =
            i < columns.size() ? std::string(columns[i].as_string()) : std::to_string(i);
        o[column] = exported(row[i]);
      }
      lines += json::serialize(o) + "\n";
    }
    std::string file = file_name_of(table) + ".jsonl";
    for (int n = 2; !names.insert(file).second; ++n) {
      file = file_name_of(table) + "-" + std::to_string(n) + ".jsonl";
    }
    json::object entry;
    entry["table"] = table;
    entry["file"] = file;
    entry["columns"] = std::move(columns);
    entry["rows"] = static_cast<std::int64_t>(rows.size());
    listed.emplace_back(std::move(entry));
    files.push_back(ExportedFile{std::move(file), std::move(lines)});
  }
  files.insert(files.begin(), ExportedFile{"tables.json", json::serialize(listed) + "\n"});
  return files;
}

}  // namespace hearth::agentapp
