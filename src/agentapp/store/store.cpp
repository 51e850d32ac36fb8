#include "agentapp/store/store.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <set>

#include "agentapp/store/staging.hpp"
#include "common/atomic_file.hpp"
#include "common/random.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

const std::vector<storage::Migration>& migrations() {
  static const std::vector<storage::Migration> kMigrations = {
      {1,
       "CREATE TABLE apps (name TEXT PRIMARY KEY, version TEXT NOT NULL, dir TEXT NOT NULL, "
       "package_hash TEXT NOT NULL, manifest_hash TEXT NOT NULL, trust TEXT NOT NULL, "
       "publisher TEXT NOT NULL, key TEXT NOT NULL, installed_at TEXT NOT NULL, "
       "enabled INTEGER NOT NULL DEFAULT 0);"
       "CREATE TABLE app_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, "
       "app TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);"},
  };
  return kMigrations;
}

std::string now_iso() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return stamp;
}

Error not_found(std::string_view name) {
  return Error::make(ErrorCode::kInvalidParams,
                     "no app named '" + std::string(name) + "' is installed");
}

const json::value* member(const json::object& o, std::string_view key) {
  return o.if_contains(key);
}

json::value pick(const json::value& item, std::initializer_list<std::string_view> keys) {
  json::object out;
  if (!item.is_object()) return out;
  for (const auto key : keys) {
    if (const auto* v = item.get_object().if_contains(key)) out[key] = *v;
  }
  return out;
}

/// A version as a folder name part: anything but [A-Za-z0-9._+-] becomes '_'.
std::string folder_safe(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '+' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_";
  return out;
}

/// Makes a tree read-only (files 0444, folders 0555) or writable again (0644, 0755).
void set_writable(const fs::path& root, bool writable) {
  std::error_code ec;
  const auto apply = [writable](const fs::path& p, bool dir) {
    ::chmod(p.c_str(), dir ? (writable ? 0755 : 0555) : (writable ? 0644 : 0444));
  };
  if (writable) apply(root, true);
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const bool dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (writable && dir) apply(it->path(), true);
    if (!dir) apply(it->path(), false);
  }
  if (!writable) {
    // Folders last, deepest first, so that the walk can still enter them.
    std::vector<fs::path> dirs;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) dirs.push_back(it->path());
    }
    for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) apply(*d, true);
    apply(root, true);
  }
}

void remove_tree(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return;
  set_writable(p, true);
  fs::remove_all(p, ec);
}

struct WriterFree {
  void operator()(archive* a) const { archive_write_free(a); }
};

/// Writes the folder `dir` (absent: nothing) as a .tar.gz at `file`; the number of files.
Result<std::size_t> export_tree(const fs::path& dir, const fs::path& file) {
  std::error_code ec;
  if (fs::exists(file, ec)) {
    return Error::make(ErrorCode::kInvalidParams,
                       file.string() + " exists: the export does not overwrite a file");
  }
  std::unique_ptr<archive, WriterFree> a(archive_write_new());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_filename(a.get(), file.c_str()) != ARCHIVE_OK) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot write " + file.string() + ": " + archive_error_string(a.get()));
  }
  std::size_t files = 0;
  if (fs::is_directory(dir, ec)) {
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      std::ifstream in(it->path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(),
                                                                     archive_entry_free);
      const std::string name = it->path().lexically_relative(dir).string();
      archive_entry_set_pathname(entry.get(), name.c_str());
      archive_entry_set_size(entry.get(), static_cast<la_int64_t>(bytes.size()));
      archive_entry_set_filetype(entry.get(), AE_IFREG);
      archive_entry_set_perm(entry.get(), 0600);
      if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK ||
          archive_write_data(a.get(), bytes.data(), bytes.size()) < 0) {
        return Error::make(ErrorCode::kInternalError,
                           "cannot write " + file.string() + ": " + archive_error_string(a.get()));
      }
      ++files;
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot finish " + file.string() + ": " + archive_error_string(a.get()));
  }
  return files;
}

InstalledApp app_of(const storage::Row& row) {
  const auto text = [&row](std::size_t i) {
    const auto* s = std::get_if<std::string>(&row[i]);
    return s != nullptr ? *s : std::string();
  };
  InstalledApp app;
  app.name = text(0);
  app.version = text(1);
  app.dir = text(2);
  app.package_hash = text(3);
  app.manifest_hash = text(4);
  app.trust = text(5);
  app.publisher = text(6);
  app.key = text(7);
  app.installed_at = text(8);
  const auto* enabled = std::get_if<std::int64_t>(&row[9]);
  app.enabled = enabled != nullptr && *enabled != 0;
  return app;
}

constexpr std::string_view kColumns =
    "name, version, dir, package_hash, manifest_hash, trust, publisher, key, installed_at, enabled";

}  // namespace

json::object InstalledApp::to_json() const {
  json::object o;
  o["name"] = name;
  o["version"] = version;
  o["enabled"] = enabled;
  o["trust"] = trust;
  o["dev"] = dev();
  if (!publisher.empty()) o["publisher"] = publisher;
  if (!key.empty()) o["key"] = key;
  o["packageHash"] = package_hash;
  o["manifestHash"] = manifest_hash;
  o["dir"] = dir.string();
  o["installedAt"] = installed_at;
  return o;
}

json::object review_of(const AppManifest& manifest, const Verified& verified) {
  const auto& fm = manifest.front_matter;
  json::object r;
  r["name"] = manifest.name;
  r["version"] = manifest.version;
  if (const auto* v = member(fm, "displayName")) r["displayName"] = *v;
  r["appType"] = manifest.app_type;
  r["trust"] = to_string(verified.trust);
  if (verified.trust == Trust::kSigned) {
    r["signedBy"] = json::object{{"publisher", verified.publisher_id}, {"key", verified.key}};
  }
  r["packageHash"] = verified.package_hash;
  r["manifestHash"] = verified.manifest_hash;

  json::array entries;
  if (const auto* list = member(fm, "entries"); list != nullptr && list->is_array()) {
    for (const auto& e : list->get_array()) {
      entries.push_back(pick(e, {"key", "kind", "title", "route"}));
    }
  }
  r["entries"] = std::move(entries);

  std::set<std::string> seen;
  json::array capabilities;
  const auto add_capability = [&](std::string_view name) {
    if (seen.insert(std::string(name)).second) capabilities.emplace_back(name);
  };
  if (const auto* req = member(fm, "requires"); req != nullptr && req->is_object()) {
    if (const auto* caps = req->get_object().if_contains("capabilities")) {
      if (caps->is_array()) {
        for (const auto& c : caps->get_array()) {
          if (c.is_string()) add_capability(c.get_string());
        }
      } else if (caps->is_object()) {
        for (const auto& [name, range] : caps->get_object()) add_capability(name);
      }
    }
  }
  if (const auto* caps = member(fm, "capabilities"); caps != nullptr && caps->is_array()) {
    for (const auto& c : caps->get_array()) {
      if (c.is_string()) add_capability(c.get_string());
    }
  }
  r["capabilities"] = std::move(capabilities);

  json::array permissions;
  std::set<std::string> hosts;
  if (const auto* list = member(fm, "permissions"); list != nullptr && list->is_array()) {
    for (const auto& p : list->get_array()) {
      permissions.push_back(
          pick(p, {"key", "scope", "access", "required", "reason", "domains", "paths"}));
      const auto* domains = p.is_object() ? p.get_object().if_contains("domains") : nullptr;
      if (domains != nullptr && domains->is_array()) {
        for (const auto& d : domains->get_array()) {
          if (d.is_string()) hosts.emplace(d.get_string());
        }
      }
    }
  }
  r["permissions"] = std::move(permissions);
  json::array network;
  for (const auto& h : hosts) network.emplace_back(h);
  r["networkHosts"] = std::move(network);

  const auto* storage = member(fm, "storage");
  r["storage"] = storage != nullptr && storage->is_object()
                     ? pick(*storage, {"namespace", "placement", "isolation", "schema",
                                       "migrations", "uninstallPolicy"})
                     : json::value(nullptr);

  json::array backends;
  json::array services;
  if (const auto* list = member(fm, "services"); list != nullptr && list->is_array()) {
    for (const auto& s : list->get_array()) {
      const auto* kind = s.is_object() ? s.get_object().if_contains("kind") : nullptr;
      if (kind != nullptr && kind->is_string() && kind->get_string() == "app-backend") {
        backends.push_back(pick(s, {"key", "language", "executionPlane", "protocol", "command",
                                    "binary", "path", "endpoint", "network", "resourceLimits"}));
      } else {
        services.push_back(pick(s, {"key", "kind", "protocol", "command", "network"}));
      }
    }
  }
  r["backends"] = std::move(backends);
  r["services"] = std::move(services);

  json::array secrets;
  if (const auto* list = member(fm, "secrets"); list != nullptr && list->is_array()) {
    for (const auto& s : list->get_array()) {
      secrets.push_back(pick(s, {"key", "required", "scope"}));
    }
  }
  r["secrets"] = std::move(secrets);

  json::array warnings;
  if (verified.trust == Trust::kUnsigned) {
    warnings.emplace_back("unsigned: installed in development mode (--dev), not verified");
  } else if (verified.trust == Trust::kZeroHash) {
    warnings.emplace_back(
        "placeholder signature (hashes of zeros): installed in development mode (--dev), not "
        "verified");
  }
  r["warnings"] = std::move(warnings);
  return r;
}

AppStore::AppStore(fs::path root, std::unique_ptr<storage::Database> db)
    : root_(std::move(root)), db_(std::move(db)), trust_(root_ / "trust") {}

Result<std::unique_ptr<AppStore>> AppStore::open(const fs::path& state_dir) {
  const fs::path root = state_dir / "apps";
  std::error_code ec;
  for (const auto* sub : {"packages", "data", "trust", "staging", "cleanup"}) {
    fs::create_directories(root / sub, ec);
    if (ec) {
      return Error::make(ErrorCode::kInternalError,
                         "cannot create " + (root / sub).string() + ": " + ec.message());
    }
  }
  ::chmod(root.c_str(), 0700);
  HEARTH_ASSIGN_OR_RETURN(auto db, storage::open_sqlite(root / "apps.db"));
  if (auto r = db->migrate("agentapp", migrations()); !r.ok()) return std::move(r).error();
  return std::unique_ptr<AppStore>(new AppStore(root, std::move(db)));
}

fs::path AppStore::data_dir(std::string_view name) const {
  return root_ / "data" / std::string(name);
}

Status AppStore::log(std::string_view app, std::string_view action, const json::object& detail) {
  auto r =
      db_->execute("INSERT INTO app_log (at, app, action, detail) VALUES (?, ?, ?, ?)",
                   {now_iso(), std::string(app), std::string(action), json::serialize(detail)});
  if (!r.ok()) return std::move(r).error();
  return {};
}

Result<json::array> AppStore::log_of(std::string_view app) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT at, action, detail FROM app_log WHERE app = ? ORDER BY id",
                            {std::string(app)}));
  json::array out;
  for (const auto& row : rows) {
    json::object o;
    o["at"] = std::get<std::string>(row[0]);
    o["action"] = std::get<std::string>(row[1]);
    auto detail = json::parse_text(std::get<std::string>(row[2]));
    o["detail"] = detail.ok() ? detail.value() : json::value(nullptr);
    out.emplace_back(std::move(o));
  }
  return out;
}

Result<InstallResult> AppStore::install(const fs::path& source, bool dev) {
  std::error_code ec;
  if (!fs::exists(source, ec)) {
    return Error::make(ErrorCode::kInvalidParams, source.string() + " does not exist");
  }
  const fs::path staging = root_ / "staging" / random_hex(8);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { remove_tree(dir); }
  } cleanup{staging};
  const bool archive = fs::is_regular_file(source, ec);
  auto staged = archive ? stage_archive(source, staging / "package")
                        : stage_folder(source, staging / "package");
  if (!staged.ok()) return std::move(staged).error();
  const fs::path package = staged.value();

  HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(package));
  if (auto existing = find(manifest.name); existing.ok()) {
    return Error::make(ErrorCode::kConflict, "'" + manifest.name + "' is already installed (" +
                                                 existing.value().version +
                                                 "); uninstall it first");
  }
  HEARTH_ASSIGN_OR_RETURN(auto verified, verify_package(package, manifest, trust_));
  if (verified.trust != Trust::kSigned && !dev) {
    return Error::make(ErrorCode::kPermissionDenied,
                       std::string(verified.trust == Trust::kUnsigned
                                       ? "the package is not signed"
                                       : "the package's signature is a placeholder (hashes of "
                                         "zeros)") +
                           ": nothing vouches for its files. Install it with --dev to accept "
                           "it unverified, in development mode.");
  }

  InstalledApp app;
  app.name = manifest.name;
  app.version = manifest.version;
  app.package_hash = verified.package_hash;
  app.manifest_hash = verified.manifest_hash;
  app.trust = std::string(to_string(verified.trust));
  app.publisher = verified.publisher_id;
  app.key = verified.key;
  app.installed_at = now_iso();
  app.dir = root_ / "packages" / app.name /
            (folder_safe(app.version) + "-" + verified.package_hash.substr(7, 12));
  fs::create_directories(app.dir.parent_path(), ec);
  remove_tree(app.dir);  // a leftover of an install that stopped before its record
  fs::rename(package, app.dir, ec);
  if (ec) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot move the package into " + app.dir.string() + ": " + ec.message());
  }
  set_writable(app.dir, false);

  auto review = review_of(manifest, verified);
  auto inserted = db_->execute(
      "INSERT INTO apps (" + std::string(kColumns) + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
      {app.name, app.version, app.dir.string(), app.package_hash, app.manifest_hash, app.trust,
       app.publisher, app.key, app.installed_at});
  if (!inserted.ok()) {
    remove_tree(app.dir);
    return std::move(inserted).error();
  }
  json::object detail = app.to_json();
  detail["review"] = review;
  if (auto r = log(app.name, "install", detail); !r.ok()) return std::move(r).error();
  return InstallResult{std::move(app), std::move(review)};
}

Result<std::vector<InstalledApp>> AppStore::list() {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT " + std::string(kColumns) + " FROM apps ORDER BY name"));
  std::vector<InstalledApp> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(app_of(row));
  return out;
}

Result<InstalledApp> AppStore::find(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT " + std::string(kColumns) + " FROM apps WHERE name = ?",
                            {std::string(name)}));
  if (rows.empty()) return not_found(name);
  return app_of(rows.front());
}

Result<json::object> AppStore::show(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  json::object out = app.to_json();
  auto manifest = read_manifest(app.dir);
  if (manifest.ok()) {
    Verified as_recorded;
    as_recorded.trust = app.trust == "signed"      ? Trust::kSigned
                        : app.trust == "zero-hash" ? Trust::kZeroHash
                                                   : Trust::kUnsigned;
    as_recorded.package_hash = app.package_hash;
    as_recorded.manifest_hash = app.manifest_hash;
    as_recorded.publisher_id = app.publisher;
    as_recorded.key = app.key;
    out["review"] = review_of(manifest.value(), as_recorded);
  } else {
    out["review"] = nullptr;
    out["problem"] = manifest.error().message;
  }
  out["dataDir"] = data_dir(name).string();
  HEARTH_ASSIGN_OR_RETURN(auto history, log_of(name));
  out["log"] = std::move(history);
  return out;
}

Status AppStore::set_enabled(std::string_view name, bool enabled) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  if (app.enabled == enabled) return {};
  auto r = db_->execute("UPDATE apps SET enabled = ? WHERE name = ?",
                        {std::int64_t{enabled ? 1 : 0}, std::string(name)});
  if (!r.ok()) return std::move(r).error();
  return log(name, enabled ? "enable" : "disable", json::object{{"version", app.version}});
}

Result<json::object> AppStore::uninstall(std::string_view name, DataPolicy policy,
                                         const fs::path& export_to) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  const fs::path data = data_dir(name);
  json::object record;
  record["app"] = app.name;
  record["version"] = app.version;
  record["packageHash"] = app.package_hash;
  record["manifestHash"] = app.manifest_hash;
  record["at"] = now_iso();
  std::error_code ec;
  const bool had_data = fs::exists(data, ec);
  switch (policy) {
    case DataPolicy::kKeep:
      record["data"] = had_data ? "kept at " + data.string() : std::string("none");
      break;
    case DataPolicy::kDelete:
      remove_tree(data);
      record["data"] = had_data ? std::string("deleted") : std::string("none");
      break;
    case DataPolicy::kExportThenDelete: {
      if (export_to.empty()) {
        return Error::make(ErrorCode::kInvalidParams,
                           "export-then-delete needs a file to export to");
      }
      HEARTH_ASSIGN_OR_RETURN(auto files, export_tree(data, export_to));
      remove_tree(data);
      record["data"] = "exported to " + export_to.string() + " (" + std::to_string(files) +
                       " files), then deleted";
      record["export"] = export_to.string();
      break;
    }
  }
  remove_tree(app.dir);
  const fs::path versions = app.dir.parent_path();
  if (fs::is_empty(versions, ec)) fs::remove(versions, ec);
  record["package"] = "removed " + app.dir.string();
  auto r = db_->execute("DELETE FROM apps WHERE name = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  if (auto logged = log(name, "uninstall", record); !logged.ok()) return std::move(logged).error();
  const fs::path file = root_ / "cleanup" / (app.name + "-" + random_hex(4) + ".json");
  record["record"] = file.string();
  if (auto w = write_file_atomic(file, json::serialize(record) + "\n"); !w.ok()) {
    return std::move(w).error();
  }
  return record;
}

}  // namespace hearth::agentapp
