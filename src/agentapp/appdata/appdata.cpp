#include "agentapp/appdata/appdata.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "agentapp/records/records.hpp"
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

}  // namespace

Result<std::unique_ptr<AppData>> AppData::open(const fs::path& data_dir, std::int64_t quota) {
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot create " + data_dir.string() + ": " + ec.message());
  }
  ::chmod(data_dir.c_str(), 0700);
  storage::SqliteOptions options;
  options.max_bytes = quota;
  HEARTH_ASSIGN_OR_RETURN(auto db, storage::open_sqlite(data_dir / "app.db", options));
  HEARTH_RETURN_IF_ERROR(db->migrate("hearth-app-data", own_tables()));
  HEARTH_RETURN_IF_ERROR(prepare_records(*db));
  return std::unique_ptr<AppData>(new AppData(std::move(db)));
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
    HEARTH_ASSIGN_OR_RETURN(auto tx, db_->begin());
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

}  // namespace hearth::agentapp
