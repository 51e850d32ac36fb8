#include "agentapp/store/store.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/package/nodefs.hpp"
#include "agentapp/store/integrity.hpp"
#include "agentapp/store/staging.hpp"
#include "common/atomic_file.hpp"
#include "common/clock.hpp"
#include "common/fd.hpp"
#include "common/random.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

/// The apps database's schema, in the SQL of the engine's `kind` (the two differ only in an
/// auto-numbered key and the type of bytes).
std::vector<storage::Migration> migrations(std::string_view kind) {
  const bool postgres = kind == "postgresql";
  const std::string serial =
      postgres ? "id BIGSERIAL PRIMARY KEY" : "id INTEGER PRIMARY KEY AUTOINCREMENT";
  const std::string bytes = postgres ? "BYTEA" : "BLOB";
  return {
      {1,
       "CREATE TABLE apps (name TEXT PRIMARY KEY, version TEXT NOT NULL, dir TEXT NOT NULL, "
       "package_hash TEXT NOT NULL, manifest_hash TEXT NOT NULL, trust TEXT NOT NULL, "
       "publisher TEXT NOT NULL, key TEXT NOT NULL, installed_at TEXT NOT NULL, "
       "enabled INTEGER NOT NULL DEFAULT 0);"
       "CREATE TABLE app_log (" +
           serial +
           ", at TEXT NOT NULL, "
           "app TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);"},
      {2,
       "CREATE TABLE grants (app TEXT NOT NULL, capability TEXT NOT NULL, "
       "workspace TEXT NOT NULL, allow INTEGER NOT NULL, by TEXT NOT NULL, at TEXT NOT NULL, "
       "PRIMARY KEY (app, capability, workspace));"},
      {3, "ALTER TABLE apps ADD COLUMN previous TEXT NOT NULL DEFAULT '';"},
      // What each installed package folder held when it was placed (integrity.hpp), by folder:
      // a rollback returns to an older folder, checked against its own list.
      {4,
       "CREATE TABLE package_files (dir TEXT PRIMARY KEY, app TEXT NOT NULL, "
       "files TEXT NOT NULL, at TEXT NOT NULL);"},
      // What the daemon's supervisor last reported of a backend that does not come up (one row
      // while it fails; removed once it runs), for `hearth app show` and its readiness.
      {5,
       "CREATE TABLE backend_reports (app TEXT NOT NULL, service TEXT NOT NULL, "
       "dir TEXT NOT NULL, report TEXT NOT NULL, at TEXT NOT NULL, "
       "PRIMARY KEY (app, service));"},
      // Each installed package's files (a row a file or folder, by package folder as
      // stored_dir names it), kept on an engine other daemons share, which unpack them.
      {6,
       "CREATE TABLE app_package_files (dir TEXT NOT NULL, app TEXT NOT NULL, "
       "path TEXT NOT NULL, kind TEXT NOT NULL, bytes " +
           bytes + ", PRIMARY KEY (dir, path));"},
  };
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

/// Makes a tree read-only (files 0444, folders 0555) or writable again (0644, 0755). One walk
/// does both: a 0555 folder can still be listed and entered. Links are left alone (chmod would
/// follow them out of the tree; the trees hearth writes hold none).
void set_writable(const fs::path& root, bool writable) {
  const auto apply = [writable](const fs::path& p, bool dir) {
    ::chmod(p.c_str(), dir ? (writable ? 0755 : 0555) : (writable ? 0644 : 0444));
  };
  apply(root, true);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    apply(it->path(), it->is_directory(ec));
  }
}

/// Removes a tree hearth wrote (a package, an app's data, a staging entry), never following a
/// link: whatever was put there since, only the tree itself goes.
void remove_tree(const fs::path& p) {
  (void)remove_tree_nofollow(p);
}

struct WriterFree {
  void operator()(archive* a) const { archive_write_free(a); }
};

/// Writes the folder `dir` (absent: nothing) and the files `extra` as a .tar.gz at `file`; the
/// number of files.
Result<std::size_t> export_tree(const fs::path& dir, const fs::path& file,
                                const std::vector<ExportedFile>& extra = {}) {
  std::error_code ec;
  if (fs::exists(file, ec)) {
    return Error::make(ErrorCode::kInvalidParams,
                       file.string() + " exists: the export does not overwrite a file");
  }
  // Written whole to a hidden file beside it, synced, then linked into place (link refuses an
  // existing name): the export is there complete or not at all.
  const fs::path partial =
      file.parent_path() / ("." + file.filename().string() + ".hearth-tmp-" + random_hex(6));
  struct Partial {
    fs::path path;
    ~Partial() {
      std::error_code ignored;
      fs::remove(path, ignored);
    }
  } cleanup{partial};
  std::unique_ptr<archive, WriterFree> a(archive_write_new());
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_open_filename(a.get(), partial.c_str()) != ARCHIVE_OK) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot write " + file.string() + ": " + archive_error_string(a.get()));
  }
  std::size_t files = 0;
  const auto add = [&](const std::string& name, const std::string& bytes) -> Status {
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(),
                                                                   archive_entry_free);
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
    return {};
  };
  if (fs::is_directory(dir, ec)) {
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      std::ifstream in(it->path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      HEARTH_RETURN_IF_ERROR(add(it->path().lexically_relative(dir).string(), bytes));
    }
  }
  for (const auto& f : extra) HEARTH_RETURN_IF_ERROR(add(f.name, f.bytes));
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot finish " + file.string() + ": " + archive_error_string(a.get()));
  }
  Fd synced(::open(partial.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!synced || ::fsync(synced.get()) != 0) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot write " + file.string() + ": " + std::strerror(errno));
  }
  if (::link(partial.c_str(), file.c_str()) != 0) {
    return Error::make(ErrorCode::kInvalidParams,
                       "cannot write " + file.string() + ": " + std::strerror(errno));
  }
  Fd folder(::open(file.parent_path().empty() ? "." : file.parent_path().c_str(),
                   O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder) ::fsync(folder.get());
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

/// An installed package whose files changed blocks the app: its readiness says why, one blocker
/// a file (docs/agent-apps.md, "The integrity check").
void block_on_integrity(json::object& readiness, const json::array& problems) {
  if (problems.empty()) return;
  std::string message = "the installed files changed since install:";
  for (const auto& p : problems) message += " " + std::string(p.as_string()) + ";";
  message.back() = '.';
  readiness["checks"].as_array().emplace_back(json::object{{"severity", "error"},
                                                           {"kind", "integrity"},
                                                           {"key", "package"},
                                                           {"blocking", true},
                                                           {"tier", "required"},
                                                           {"message", message}});
  for (const auto& p : problems) readiness["blockers"].as_array().emplace_back(p);
  readiness["ok"] = false;
  readiness["status"] = "blocked";
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

namespace {

/// `fields` of each item of the list `key` of the front matter (none when it is not a list).
json::array pick_each(const json::object& fm, std::string_view key,
                      std::initializer_list<std::string_view> fields) {
  json::array out;
  if (const auto* list = member(fm, key); list != nullptr && list->is_array()) {
    for (const auto& item : list->get_array()) out.push_back(pick(item, fields));
  }
  return out;
}

/// The capabilities the app names (requires.capabilities as a list or a map, and
/// capabilities), each once, in the order first named.
json::array named_capabilities(const json::object& fm) {
  std::set<std::string> seen;
  json::array capabilities;
  const auto add = [&](std::string_view name) {
    if (seen.insert(std::string(name)).second) capabilities.emplace_back(name);
  };
  if (const auto* req = member(fm, "requires"); req != nullptr && req->is_object()) {
    if (const auto* caps = req->get_object().if_contains("capabilities")) {
      if (caps->is_array()) {
        for (const auto& c : caps->get_array()) {
          if (c.is_string()) add(c.get_string());
        }
      } else if (caps->is_object()) {
        for (const auto& [name, range] : caps->get_object()) add(name);
      }
    }
  }
  if (const auto* caps = member(fm, "capabilities"); caps != nullptr && caps->is_array()) {
    for (const auto& c : caps->get_array()) {
      if (c.is_string()) add(c.get_string());
    }
  }
  return capabilities;
}

/// The hosts the app's permissions name (their `domains`), each once, sorted.
json::array network_hosts(const json::object& fm) {
  std::set<std::string> hosts;
  if (const auto* list = member(fm, "permissions"); list != nullptr && list->is_array()) {
    for (const auto& p : list->get_array()) {
      const auto* domains = p.is_object() ? p.get_object().if_contains("domains") : nullptr;
      if (domains == nullptr || !domains->is_array()) continue;
      for (const auto& d : domains->get_array()) {
        if (d.is_string()) hosts.emplace(d.get_string());
      }
    }
  }
  json::array network;
  for (const auto& h : hosts) network.emplace_back(h);
  return network;
}

/// The app's backends (services of kind app-backend) and its other services, as reviewed.
void add_services(const json::object& fm, json::object& r) {
  json::array backends;
  json::array services;
  if (const auto* list = member(fm, "services"); list != nullptr && list->is_array()) {
    for (const auto& s : list->get_array()) {
      const auto* kind = s.is_object() ? s.get_object().if_contains("kind") : nullptr;
      if (kind != nullptr && kind->is_string() && kind->get_string() == "app-backend") {
        backends.push_back(
            pick(s, {"key", "language", "executionPlane", "protocol", "command", "args", "binary",
                     "path", "entry", "endpoint", "network", "resourceLimits"}));
      } else {
        services.push_back(pick(s, {"key", "kind", "protocol", "command", "network"}));
      }
    }
  }
  r["backends"] = std::move(backends);
  r["services"] = std::move(services);
}

}  // namespace

json::object review_of(const AppManifest& manifest, const Verified& verified,
                       const std::filesystem::path& package) {
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
  r["entries"] = pick_each(fm, "entries", {"key", "kind", "title", "route"});
  r["capabilities"] = named_capabilities(fm);
  r["permissions"] = pick_each(
      fm, "permissions", {"key", "scope", "access", "required", "reason", "domains", "paths"});
  r["networkHosts"] = network_hosts(fm);
  const auto* storage = member(fm, "storage");
  r["storage"] = storage != nullptr && storage->is_object()
                     ? pick(*storage, {"namespace", "placement", "isolation", "schema",
                                       "migrations", "uninstallPolicy"})
                     : json::value(nullptr);
  add_services(fm, r);
  r["tools"] = pick_each(fm, "toolRefs", {"key", "provider", "capability"});
  // What the app's tools may do without the person (docs/app-server.md, "Tools and their
  // policies"): the person approves these with the review.
  json::array operations;
  for (const auto& op : operations_of(fm, package)) {
    operations.push_back(pick(op, {"key", "type", "sideEffect", "approvalRequired", "autoExecute",
                                   "dryRunRequired", "evidenceRequired"}));
  }
  r["operations"] = std::move(operations);
  r["secrets"] = pick_each(fm, "secrets", {"key", "required", "scope"});
  json::array warnings;
  if (verified.trust == Trust::kUnsigned) {
    warnings.emplace_back("unsigned: installed in development mode (--dev), not verified");
  } else if (verified.trust == Trust::kZeroHash) {
    warnings.emplace_back(
        "placeholder signature (hashes of zeros): installed in development mode (--dev), not "
        "verified");
  }
  for (auto& unknown : unknown_front_matter_keys(fm)) warnings.emplace_back(std::move(unknown));
  r["warnings"] = std::move(warnings);
  return r;
}

AppStore::AppStore(fs::path root, std::shared_ptr<storage::Engine> engine,
                   std::unique_ptr<storage::Database> db)
    : root_(std::move(root)),
      engine_(std::move(engine)),
      db_(std::move(db)),
      trust_(root_ / "trust") {}

AppStore::~AppStore() {
  // Both handlers hold the store: ended with it (on_resync's id is ended as subscribe's is).
  if (bus_subscription_ != 0) engine_->bus().unsubscribe(bus_subscription_);
  if (bus_resync_ != 0) engine_->bus().unsubscribe(bus_resync_);
}

Result<std::unique_ptr<AppStore>> AppStore::open(const fs::path& state_dir,
                                                 std::shared_ptr<storage::Engine> engine) {
  if (!engine) return Error::make(ErrorCode::kInternalError, "the app store needs an engine");
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
  HEARTH_ASSIGN_OR_RETURN(auto db, engine->open("apps", root / "apps.db"));
  if (auto r = db->migrate("agentapp", migrations(engine->kind())); !r.ok()) {
    return std::move(r).error();
  }
  std::unique_ptr<AppStore> store(new AppStore(root, std::move(engine), std::move(db)));
  store->clean_staging();
  if (store->engine_->shared()) {
    // Another daemon changed an app: what is cached of it (the bridge's) is read again. The
    // store caches nothing itself. A notice names the app; one that does not parse, or a
    // reconnection, drops everything.
    AppStore* self = store.get();
    store->bus_subscription_ =
        store->engine_->bus().subscribe("apps", [self](const storage::Notice& notice) {
          auto parsed = json::parse_text(notice.payload);
          const auto* app = parsed.ok() && parsed.value().is_object()
                                ? parsed.value().get_object().if_contains("app")
                                : nullptr;
          self->notify(app != nullptr && app->is_string() ? std::string_view(app->get_string())
                                                          : std::string_view());
        });
    store->bus_resync_ = store->engine_->bus().on_resync([self] { self->notify({}); });
  }
  return store;
}

std::uint64_t AppStore::on_changed(std::function<void(std::string_view app)> listener) {
  const std::lock_guard lock(listeners_mutex_);
  const std::uint64_t id = next_listener_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void AppStore::remove_on_changed(std::uint64_t id) {
  const std::lock_guard lock(listeners_mutex_);
  listeners_.erase(id);
}

void AppStore::notify(std::string_view app) {
  const std::lock_guard lock(listeners_mutex_);
  for (const auto& [id, listener] : listeners_) listener(app);
}

void AppStore::changed(std::string_view app, std::string_view action) {
  notify(app);
  if (engine_->shared()) {
    // Best effort, as the bus is: a daemon that misses it is told to resync.
    (void)engine_->bus().publish("apps",
                                 json::serialize(json::object{{"app", app}, {"action", action}}));
  }
}

std::string AppStore::stored_dir(const fs::path& dir) const {
  if (!engine_->shared()) return dir.string();
  return dir.lexically_relative(root_).generic_string();
}

fs::path AppStore::local_dir(std::string_view stored) const {
  const fs::path p{std::string(stored)};
  return p.is_relative() && !p.empty() ? root_ / p : p;
}

InstalledApp AppStore::app_of_row(const storage::Row& row) const {
  InstalledApp app = app_of(row);
  app.dir = local_dir(app.dir.string());
  return app;
}

storage::AppPlacement AppStore::placement_of(const InstalledApp& app) {
  (void)ensure_local(app);
  auto manifest = read_manifest(app.dir);
  return app_placement(app.name, manifest.ok() ? manifest.value().front_matter : json::object(),
                       data_dir(app.name));
}

Result<std::unique_ptr<AppData>> AppStore::open_data(const InstalledApp& app) {
  const auto placement = placement_of(app);
  HEARTH_RETURN_IF_ERROR(placement_supported(placement));
  return AppData::open(*engine_, placement);
}

Status AppStore::placement_supported(const storage::AppPlacement& placement) const {
  if (placement.placement != kServerPostgresql || engine_->kind() == "postgresql") return {};
  return Error::make(
      ErrorCode::kInvalidParams,
      "'" + placement.app +
          "' keeps its data on a PostgreSQL server (storage.placement: server-postgresql), and "
          "this hearth keeps data in SQLite files: run hearth with --database "
          "postgresql://... (a PostgreSQL database, which several hearth daemons may share) to "
          "install it",
      json::object{{"placement", placement.placement}, {"engine", engine_->kind()}});
}

json::object AppStore::assess(const AppManifest& manifest, const InstalledApp& app) {
  auto ready = assess_readiness(manifest, app.dir, readiness_);
  const auto placement = app_placement(app.name, manifest.front_matter, data_dir(app.name));
  if (auto supported = placement_supported(placement); !supported.ok()) {
    const std::string message = supported.error().message;
    ready["checks"].as_array().emplace_back(json::object{{"severity", "error"},
                                                         {"kind", "storage"},
                                                         {"key", "storage.placement"},
                                                         {"blocking", true},
                                                         {"tier", "required"},
                                                         {"message", message}});
    ready["blockers"].as_array().emplace_back(message);
    ready["ok"] = false;
    ready["status"] = "blocked";
  }
  return ready;
}

Status AppStore::save_package_files(const InstalledApp& app, const PackageTree& tree) {
  if (!engine_->shared()) return {};
  const std::string dir = stored_dir(app.dir);
  HEARTH_RETURN_IF_ERROR(db_->execute("DELETE FROM app_package_files WHERE dir = ?", {dir}));
  for (const auto& [path, entry] : tree) {
    storage::Value bytes = nullptr;
    if (entry.kind == TreeEntry::Kind::kFile) {
      std::ifstream in(app.dir / path, std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        return Error::make(ErrorCode::kInternalError, "cannot read " + (app.dir / path).string());
      }
      bytes = storage::Blob{std::move(content)};
    } else if (entry.kind != TreeEntry::Kind::kFolder) {
      continue;  // never placed: the stager refuses links and other files
    }
    HEARTH_RETURN_IF_ERROR(db_->execute(
        "INSERT INTO app_package_files (dir, app, path, kind, bytes) VALUES (?, ?, ?, ?, ?)",
        {dir, app.name, path, std::string(entry.kind == TreeEntry::Kind::kFile ? "file" : "folder"),
         bytes}));
  }
  return {};
}

namespace {

/// A path of a package's file as the database holds it, checked before it is written below
/// the package: relative, with no `..`, `.` or empty part.
bool safe_package_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return path.find('\0') == std::string_view::npos;
}

}  // namespace

Status AppStore::ensure_local(const InstalledApp& app) {
  if (!engine_->shared()) return {};
  const std::lock_guard lock(unpack_mutex_);
  std::error_code ec;
  if (fs::is_directory(app.dir, ec)) return {};
  const std::string dir = stored_dir(app.dir);
  const std::string which = "the package of '" + app.name + "' " + app.version;
  HEARTH_ASSIGN_OR_RETURN(auto listed,
                          db_->query("SELECT files FROM package_files WHERE dir = ?", {dir}));
  HEARTH_ASSIGN_OR_RETURN(
      auto rows,
      db_->query("SELECT path, kind, bytes FROM app_package_files WHERE dir = ? ORDER BY path",
                 {dir}));
  if (listed.empty() || rows.empty()) {
    return Error::make(ErrorCode::kPermissionDenied,
                       which + " is neither in " + app.dir.string() + " nor in the database");
  }
  auto parsed = json::parse_text(std::get<std::string>(listed.front().at(0)));
  if (!parsed.ok()) {
    return Error::make(ErrorCode::kInternalError,
                       "the recorded file list of " + dir + " is damaged");
  }
  HEARTH_ASSIGN_OR_RETURN(auto recorded, tree_from_json(parsed.value()));
  // Written into a staging entry, checked, then moved into place in one rename.
  HEARTH_ASSIGN_OR_RETURN(auto entry, StagingEntry::create(root_ / "staging"));
  const fs::path dest = entry.path() / "package";
  fs::create_directories(dest, ec);
  for (const auto& row : rows) {
    const auto* path = std::get_if<std::string>(&row.at(0));
    const auto* kind = std::get_if<std::string>(&row.at(1));
    if (path == nullptr || kind == nullptr || !safe_package_path(*path)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         which +
                             " in the database names a file outside the package; it is "
                             "not used");
    }
    const fs::path target = dest / *path;
    fs::create_directories(*kind == "folder" ? target : target.parent_path(), ec);
    if (*kind != "folder") {
      const auto* bytes = std::get_if<storage::Blob>(&row.at(2));
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      if (bytes != nullptr) out << bytes->bytes;
      if (!out) {
        return Error::make(ErrorCode::kInternalError, "cannot write " + target.string());
      }
    }
  }
  HEARTH_ASSIGN_OR_RETURN(auto now, read_package_tree(dest));
  if (auto changes = tree_changes(recorded, now); !changes.empty()) {
    std::string message = which +
                          " in the database differs from the files recorded at "
                          "install, and is not used:";
    json::array problems;
    for (const auto& c : changes) {
      message += "\n  " + c;
      problems.emplace_back(c);
    }
    return Error::make(ErrorCode::kPermissionDenied, message,
                       json::object{{"app", app.name}, {"problems", std::move(problems)}});
  }
  fs::create_directories(app.dir.parent_path(), ec);
  fs::rename(dest, app.dir, ec);
  if (ec) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot move " + which + " into " + app.dir.string() + ": " + ec.message());
  }
  set_writable(app.dir, false);
  return {};
}

std::vector<std::string> AppStore::clean_staging() {
  return remove_stale_staging(root_ / "staging");
}

Result<std::vector<std::string>> AppStore::integrity_problems(const InstalledApp& app) {
  std::vector<std::string> problems;
  // On a shared engine, a package another daemon installed is unpacked here first, checked.
  if (auto local = ensure_local(app); !local.ok()) {
    problems.push_back(local.error().message);
    return problems;
  }
  auto now = read_package_tree(app.dir);
  if (!now.ok()) {
    problems.push_back(now.error().message);
    return problems;
  }
  HEARTH_ASSIGN_OR_RETURN(auto rows, db_->query("SELECT files FROM package_files WHERE dir = ?",
                                                {stored_dir(app.dir)}));
  if (!rows.empty()) {
    auto parsed = json::parse_text(std::get<std::string>(rows.front().at(0)));
    if (!parsed.ok()) {
      return Error::make(ErrorCode::kInternalError,
                         "the recorded file list of " + app.dir.string() + " is damaged");
    }
    HEARTH_ASSIGN_OR_RETURN(auto recorded, tree_from_json(parsed.value()));
    return tree_changes(recorded, now.value());
  }
  // Placed before hearth recorded file lists: the package hash recorded at install covers every
  // file but app.signature.yaml, .git and node_modules, and follows links - so a link, or
  // anything in the two folders the stager never copies, is a change in itself.
  for (const auto& [path, entry] : now.value()) {
    bool skipped_folder = false;
    for (const auto& part : fs::path(path)) {
      skipped_folder = skipped_folder || part == ".git" || part == "node_modules";
    }
    if (entry.kind == TreeEntry::Kind::kLink || entry.kind == TreeEntry::Kind::kOther) {
      problems.push_back(path + " is not a plain file or folder (it was at install)");
    } else if (skipped_folder) {
      problems.push_back(path + " was added since install");
    }
  }
  if (!problems.empty()) return problems;
  auto hash = nodefs::package_hash(app.dir.string(), "app.signature.yaml");
  if (!hash.ok() || hash.value() != app.package_hash) {
    problems.push_back(
        "the package's files changed since install (package hash " +
        (hash.ok() ? hash.value() : hash.error().message) + ", " + app.package_hash +
        " at install; it was installed before hearth kept a list of each file, so the file is "
        "not named)");
    return problems;
  }
  // The hash holds: the files are the installed ones, and their list is kept from now on.
  (void)db_->execute(
      "INSERT INTO package_files (dir, app, files, at) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (dir) DO NOTHING",
      {stored_dir(app.dir), app.name, json::serialize(tree_to_json(now.value())), utc_now()});
  return problems;
}

Status AppStore::verify_installed(const InstalledApp& app, std::string_view when) {
  HEARTH_ASSIGN_OR_RETURN(auto problems, integrity_problems(app));
  if (problems.empty()) return {};
  // Disabled and logged in one transaction: nobody sees it disabled without the reason.
  HEARTH_ASSIGN_OR_RETURN(auto transaction, db_->begin());
  // Disabled only while it is still at this package: an upgrade or a rollback since then
  // moved it to another folder, which is checked on its own.
  HEARTH_ASSIGN_OR_RETURN(
      auto disabled,
      db_->execute("UPDATE apps SET enabled = 0 WHERE name = ? AND dir = ? AND enabled = 1",
                   {app.name, stored_dir(app.dir)}));
  json::array listed;
  std::string message = "'" + app.name + "' " + app.version +
                        " is disabled: its installed files changed since install, and none of "
                        "its code runs:";
  for (const auto& p : problems) {
    listed.emplace_back(p);
    message += "\n  " + p;
  }
  message += "\n  Install it again (uninstall, then install) or upgrade it to a new package.";
  json::object detail{
      {"version", app.version}, {"dir", app.dir.string()}, {"packageHash", app.package_hash},
      {"when", when},           {"problems", listed},      {"disabled", disabled > 0}};
  HEARTH_RETURN_IF_ERROR(log(app.name, "integrity-failed", detail));
  HEARTH_RETURN_IF_ERROR(transaction->commit());
  if (disabled > 0) changed(app.name, "disable");
  return Error::make(ErrorCode::kPermissionDenied, message,
                     json::object{{"app", app.name},
                                  {"version", app.version},
                                  {"dir", app.dir.string()},
                                  {"problems", std::move(listed)}});
}

Result<std::vector<Error>> AppStore::verify_enabled(std::string_view when) {
  HEARTH_ASSIGN_OR_RETURN(auto apps, list());
  std::vector<Error> failed;
  for (const auto& app : apps) {
    if (!app.enabled) continue;
    auto checked = verify_installed(app, when);
    if (!checked.ok()) failed.push_back(std::move(checked).error());
  }
  return failed;
}

fs::path AppStore::data_dir(std::string_view name) const {
  return root_ / "data" / std::string(name);
}

Status AppStore::log(std::string_view app, std::string_view action, const json::object& detail) {
  auto r =
      db_->execute("INSERT INTO app_log (at, app, action, detail) VALUES (?, ?, ?, ?)",
                   {utc_now(), std::string(app), std::string(action), json::serialize(detail)});
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

struct AppStore::Staged {
  StagingEntry staging;  ///< locked while the install runs; removed with this object
  fs::path package;
  AppManifest manifest;
  Verified verified;
};

Result<AppStore::Staged> AppStore::stage_and_verify(const fs::path& source, bool dev) {
  std::error_code ec;
  if (!fs::exists(source, ec)) {
    return Error::make(ErrorCode::kInvalidParams, source.string() + " does not exist");
  }
  clean_staging();
  Staged staged;
  HEARTH_ASSIGN_OR_RETURN(staged.staging, StagingEntry::create(root_ / "staging"));
  const bool archive = fs::is_regular_file(source, ec);
  const fs::path dest = staged.staging.path() / "package";
  HEARTH_ASSIGN_OR_RETURN(staged.package,
                          archive ? stage_archive(source, dest) : stage_folder(source, dest));
  HEARTH_ASSIGN_OR_RETURN(staged.manifest, read_manifest(staged.package));
  HEARTH_ASSIGN_OR_RETURN(staged.verified, verify_package(staged.package, staged.manifest, trust_));
  if (staged.verified.trust != Trust::kSigned && !dev) {
    return Error::make(ErrorCode::kPermissionDenied,
                       std::string(staged.verified.trust == Trust::kUnsigned
                                       ? "the package is not signed"
                                       : "the package's signature is a placeholder (hashes of "
                                         "zeros)") +
                           ": nothing vouches for its files. Install it with --dev to accept "
                           "it unverified, in development mode.");
  }
  return staged;
}

Result<InstalledApp> AppStore::place(Staged& staged) {
  std::error_code ec;
  InstalledApp app;
  app.name = staged.manifest.name;
  app.version = staged.manifest.version;
  app.package_hash = staged.verified.package_hash;
  app.manifest_hash = staged.verified.manifest_hash;
  app.trust = std::string(to_string(staged.verified.trust));
  app.publisher = staged.verified.publisher_id;
  app.key = staged.verified.key;
  app.installed_at = utc_now();
  app.dir = root_ / "packages" / app.name /
            (folder_safe(app.version) + "-" + staged.verified.package_hash.substr(7, 12));
  fs::create_directories(app.dir.parent_path(), ec);
  remove_tree(app.dir);  // a leftover of an install that stopped before its record
  fs::rename(staged.package, app.dir, ec);
  if (ec) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot move the package into " + app.dir.string() + ": " + ec.message());
  }
  set_writable(app.dir, false);
  // What was placed, file by file, for the integrity check (verify_installed): read from the
  // folder as placed, which is the verified staging copy moved in one rename.
  auto tree = read_package_tree(app.dir);
  if (!tree.ok()) {
    remove_tree(app.dir);
    return std::move(tree).error();
  }
  // The list and (on a shared engine) the files themselves, in one transaction.
  const auto record = [&]() -> Status {
    HEARTH_ASSIGN_OR_RETURN(auto transaction, db_->begin());
    HEARTH_RETURN_IF_ERROR(db_->execute(
        "INSERT INTO package_files (dir, app, files, at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (dir) DO UPDATE SET app = excluded.app, files = excluded.files, "
        "at = excluded.at",
        {stored_dir(app.dir), app.name, json::serialize(tree_to_json(tree.value())), utc_now()}));
    HEARTH_RETURN_IF_ERROR(save_package_files(app, tree.value()));
    return transaction->commit();
  };
  if (auto recorded = record(); !recorded.ok()) {
    remove_tree(app.dir);
    return std::move(recorded).error();
  }
  return app;
}

void AppStore::discard_package(const fs::path& dir) {
  remove_tree(dir);
  (void)db_->execute("DELETE FROM package_files WHERE dir = ?", {stored_dir(dir)});
  (void)db_->execute("DELETE FROM app_package_files WHERE dir = ?", {stored_dir(dir)});
}

Result<InstallResult> AppStore::install(const fs::path& source, bool dev, bool strict) {
  // At the end, whatever happened (declared first: it runs after the entry below is gone).
  const StagingSweep sweep{*this};
  HEARTH_ASSIGN_OR_RETURN(auto staged, stage_and_verify(source, dev));
  if (strict) {
    if (auto unknown = unknown_front_matter_keys(staged.manifest.front_matter); !unknown.empty()) {
      std::string message = "--strict: the package is refused";
      json::array keys;
      for (auto& u : unknown) {
        message += "\n" + u;
        keys.emplace_back(std::move(u));
      }
      return Error::make(ErrorCode::kInvalidParams, std::move(message),
                         json::object{{"unknownKeys", std::move(keys)}});
    }
  }
  // Where its tables would go: an engine that cannot hold them refuses it now, saying how.
  HEARTH_RETURN_IF_ERROR(placement_supported(app_placement(
      staged.manifest.name, staged.manifest.front_matter, data_dir(staged.manifest.name))));
  if (auto existing = find(staged.manifest.name); existing.ok()) {
    return Error::make(ErrorCode::kConflict,
                       "'" + staged.manifest.name + "' is already installed (" +
                           existing.value().version + "); upgrade it, or uninstall it first");
  }
  HEARTH_ASSIGN_OR_RETURN(auto app, place(staged));
  auto review = review_of(staged.manifest, staged.verified, app.dir);
  review["readiness"] = assess(staged.manifest, app);
  auto inserted = db_->execute(
      "INSERT INTO apps (" + std::string(kColumns) + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
      {app.name, app.version, stored_dir(app.dir), app.package_hash, app.manifest_hash, app.trust,
       app.publisher, app.key, app.installed_at});
  if (!inserted.ok()) {
    discard_package(app.dir);
    return std::move(inserted).error();
  }
  json::object detail = app.to_json();
  detail["review"] = review;
  if (auto r = log(app.name, "install", detail); !r.ok()) return std::move(r).error();
  changed(app.name, "install");
  return InstallResult{std::move(app), std::move(review)};
}

namespace {

json::array minus(const std::vector<std::string>& now, const std::vector<std::string>& before) {
  json::array out;
  for (const auto& item : now) {
    if (std::find(before.begin(), before.end(), item) == before.end()) out.emplace_back(item);
  }
  return out;
}

std::vector<std::string> strings_of(const json::value& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& v : list.get_array()) {
    out.push_back(v.is_string() ? std::string(v.get_string()) : json::serialize(v));
  }
  return out;
}

/// Each permission as "key: scope access [domains]", each backend as "key: protocol command".
std::vector<std::string> described(const json::object& review, std::string_view section) {
  std::vector<std::string> out;
  const auto* list = review.if_contains(section);
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& item : list->get_array()) out.push_back(json::serialize(item));
  return out;
}

/// The names of the package's migration files (none when they cannot be listed: the upgrade
/// then finds nothing new there, and enabling reports the problem).
std::vector<std::string> migration_names(const fs::path& package, const json::object& fm) {
  std::vector<std::string> out;
  auto files = migration_files(package, fm);
  if (!files.ok()) return out;
  for (const auto& f : files.value()) out.push_back(f.filename().string());
  return out;
}

}  // namespace

Result<UpgradeResult> AppStore::upgrade(const fs::path& source, bool dev, bool approve) {
  const StagingSweep sweep{*this};
  HEARTH_ASSIGN_OR_RETURN(auto staged, stage_and_verify(source, dev));
  auto installed = find(staged.manifest.name);
  if (!installed.ok()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "'" + staged.manifest.name + "' is not installed: install it first");
  }
  UpgradeResult result;
  result.app = installed.value();
  if (staged.verified.package_hash == result.app.package_hash) {
    return Error::make(ErrorCode::kConflict, "this package is the one installed");
  }
  (void)ensure_local(result.app);
  HEARTH_ASSIGN_OR_RETURN(auto old_manifest, read_manifest(result.app.dir));
  // The new version's tables go where the old one's are: an engine that cannot hold them
  // refuses it, and hearth does not move an app's data from one placement to another.
  const auto new_placement = app_placement(staged.manifest.name, staged.manifest.front_matter,
                                           data_dir(staged.manifest.name));
  HEARTH_RETURN_IF_ERROR(placement_supported(new_placement));
  const auto old_placement =
      app_placement(result.app.name, old_manifest.front_matter, data_dir(result.app.name));
  if (new_placement.placement != old_placement.placement ||
      (new_placement.placement == kServerPostgresql &&
       new_placement.isolation != old_placement.isolation)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "the upgrade moves the app's data from " + old_placement.placement + " (" +
                           old_placement.isolation + ") to " + new_placement.placement + " (" +
                           new_placement.isolation +
                           "): hearth does not move an app's data between placements; export "
                           "it, uninstall, and install the new version");
  }
  Verified old_verified;
  old_verified.package_hash = result.app.package_hash;
  const auto old_review = review_of(old_manifest, old_verified, result.app.dir);
  const auto new_review = review_of(staged.manifest, staged.verified, staged.package);
  result.added["capabilities"] = minus(declared_capabilities(staged.manifest.front_matter),
                                       declared_capabilities(old_manifest.front_matter));
  result.added["permissions"] =
      minus(described(new_review, "permissions"), described(old_review, "permissions"));
  result.added["networkHosts"] =
      minus(strings_of(new_review.at("networkHosts")), strings_of(old_review.at("networkHosts")));
  result.added["migrations"] = minus(migration_names(staged.package, staged.manifest.front_matter),
                                     migration_names(result.app.dir, old_manifest.front_matter));
  result.added["backends"] =
      minus(described(new_review, "backends"), described(old_review, "backends"));
  // An operation that now lets a tool run without the person, or anything else its policy
  // changes, is approved again.
  result.added["operations"] =
      minus(described(new_review, "operations"), described(old_review, "operations"));
  for (const auto& [key, list] : result.added) {
    result.needs_approval = result.needs_approval || !list.as_array().empty();
  }
  if (result.needs_approval && !approve) return result;  // nothing changes

  const InstalledApp old_app = result.app;
  HEARTH_ASSIGN_OR_RETURN(auto app, place(staged));
  app.enabled = old_app.enabled;
  if (old_app.enabled) {
    // The new version is ready only when its migrations ran; until then the old one stays.
    HEARTH_ASSIGN_OR_RETURN(auto data, AppData::open(*engine_, new_placement));
    auto applied = data->migrate(app.dir, staged.manifest.front_matter);
    if (!applied.ok()) {
      if (app.dir != old_app.dir) discard_package(app.dir);
      (void)log(
          app.name, "upgrade-failed",
          json::object{
              {"from", old_app.version}, {"to", app.version}, {"error", applied.error().message}});
      return Error::make(applied.error().code, "upgrade to " + app.version + " stopped, " +
                                                   old_app.version +
                                                   " stays installed: " + applied.error().message);
    }
    result.migrations_applied = std::move(applied.value());
  }
  json::object previous = old_app.to_json();
  previous["dir"] = stored_dir(old_app.dir);
  auto updated = db_->execute(
      "UPDATE apps SET version = ?, dir = ?, package_hash = ?, manifest_hash = ?, trust = ?, "
      "publisher = ?, key = ?, installed_at = ?, previous = ? WHERE name = ?",
      {app.version, stored_dir(app.dir), app.package_hash, app.manifest_hash, app.trust,
       app.publisher, app.key, app.installed_at, json::serialize(previous), app.name});
  if (!updated.ok()) {
    discard_package(app.dir);
    return std::move(updated).error();
  }
  if (old_app.enabled) {
    for (const auto& capability : result.added.at("capabilities").as_array()) {
      HEARTH_RETURN_IF_ERROR(grant(app.name, capability.as_string(), "", true, "upgrade-review"));
    }
  }
  HEARTH_RETURN_IF_ERROR(log(app.name, "upgrade",
                             json::object{{"from", old_app.version},
                                          {"to", app.version},
                                          {"added", result.added},
                                          {"approved", result.needs_approval},
                                          {"migrationsApplied", result.migrations_applied},
                                          {"packageHash", app.package_hash}}));
  changed(app.name, "upgrade");
  result.app = std::move(app);
  result.upgraded = true;
  return result;
}

Result<InstalledApp> AppStore::rollback(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(auto current, find(name));
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT previous FROM apps WHERE name = ?", {std::string(name)}));
  const std::string previous_text = std::get<std::string>(rows.at(0).at(0));
  auto previous = json::parse_text(previous_text);
  if (previous_text.empty() || !previous.ok() || !previous.value().is_object()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "'" + std::string(name) + "' has no earlier version to return to");
  }
  const auto& p = previous.value().get_object();
  const auto text = [&p](std::string_view key) {
    const auto* v = p.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  InstalledApp back = current;
  back.version = text("version");
  back.dir = local_dir(text("dir"));
  back.package_hash = text("packageHash");
  back.manifest_hash = text("manifestHash");
  back.trust = text("trust");
  back.publisher = text("publisher");
  back.key = text("key");
  back.installed_at = text("installedAt");
  std::error_code ec;
  (void)ensure_local(back);
  if (!fs::is_directory(back.dir, ec)) {
    return Error::make(ErrorCode::kInternalError,
                       "the package of " + back.version + " is gone: " + back.dir.string());
  }
  json::object forward = current.to_json();
  forward["dir"] = stored_dir(current.dir);
  HEARTH_RETURN_IF_ERROR(db_->execute(
      "UPDATE apps SET version = ?, dir = ?, package_hash = ?, manifest_hash = ?, trust = ?, "
      "publisher = ?, key = ?, installed_at = ?, previous = ? WHERE name = ?",
      {back.version, stored_dir(back.dir), back.package_hash, back.manifest_hash, back.trust,
       back.publisher, back.key, back.installed_at, json::serialize(forward), std::string(name)}));
  HEARTH_RETURN_IF_ERROR(
      log(name, "rollback", json::object{{"from", current.version}, {"to", back.version}}));
  changed(name, "rollback");
  return back;
}

Result<std::vector<InstalledApp>> AppStore::list() {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT " + std::string(kColumns) + " FROM apps ORDER BY name"));
  std::vector<InstalledApp> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    out.push_back(app_of_row(row));
    // Installed through another daemon: its package is unpacked here (a problem is the
    // integrity check's to report).
    (void)ensure_local(out.back());
  }
  return out;
}

Result<InstalledApp> AppStore::find(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT " + std::string(kColumns) + " FROM apps WHERE name = ?",
                            {std::string(name)}));
  if (rows.empty()) return not_found(name);
  InstalledApp app = app_of_row(rows.front());
  (void)ensure_local(app);
  return app;
}

Result<json::object> AppStore::show(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  json::object out = app.to_json();
  // Checked now, so that a person sees why an app was disabled or cannot be enabled.
  auto problems = integrity_problems(app);
  json::array changed;
  if (problems.ok()) {
    for (const auto& p : problems.value()) changed.emplace_back(p);
  } else {
    changed.emplace_back(problems.error().message);
  }
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
    out["review"] = review_of(manifest.value(), as_recorded, app.dir);
    auto ready = assess(manifest.value(), app);
    block_on_integrity(ready, changed);
    // What the daemon reported of this package's backends that do not come up.
    json::array failing;
    if (auto reports = backend_reports(name); reports.ok()) {
      for (auto& r : reports.value()) {
        if (json::string_member(r, "dir") == app.dir.string()) failing.emplace_back(std::move(r));
      }
    }
    add_backend_failures(ready, failing);
    out["backends"] = std::move(failing);
    out["readiness"] = std::move(ready);
    out["projection"] = project_native(manifest.value(), app.dir, as_recorded);
  } else {
    out["review"] = nullptr;
    out["problem"] = manifest.error().message;
  }
  out["integrity"] = json::object{{"ok", changed.empty()}, {"problems", std::move(changed)}};
  out["dataDir"] = data_dir(name).string();
  const auto placement = placement_of(app);
  out["storage"] = json::object{{"placement", placement.placement},
                                {"isolation", placement.isolation},
                                {"engine", engine_->kind()}};
  std::error_code ec;
  // A local app's file is opened only when it exists (show makes none); an app on PostgreSQL
  // has its schema from its first enabling on.
  if (placement.placement == kServerPostgresql ? app.enabled
                                               : fs::exists(placement.sqlite_file, ec)) {
    auto data = open_data(app);
    auto applied = data.ok() ? data.value()->applied() : Result<json::array>(json::array());
    out["migrations"] = applied.ok() ? std::move(applied.value()) : json::array();
  }
  HEARTH_ASSIGN_OR_RETURN(auto granted, grants(name));
  out["grants"] = std::move(granted);
  HEARTH_ASSIGN_OR_RETURN(auto history, log_of(name));
  out["log"] = std::move(history);
  return out;
}

Status AppStore::set_enabled(std::string_view name, bool enabled) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  if (app.enabled == enabled) return {};
  json::object detail{{"version", app.version}};
  if (enabled) {
    // Only the files that were installed: nothing changed, added or removed since.
    HEARTH_ASSIGN_OR_RETURN(auto problems, integrity_problems(app));
    if (!problems.empty()) {
      std::string message = "'" + std::string(name) +
                            "' cannot be enabled: its installed files changed since install:";
      json::array listed;
      for (const auto& p : problems) {
        message += "\n  " + p;
        listed.emplace_back(p);
      }
      message += "\n  Install it again (uninstall, then install) or upgrade it to a new package.";
      json::object refused = detail;
      refused["dir"] = app.dir.string();
      refused["integrity"] = listed;
      (void)log(name, "enable-refused", refused);
      return Error::make(ErrorCode::kPermissionDenied, message,
                         json::object{{"app", app.name}, {"problems", std::move(listed)}});
    }
    // Only an app the host can serve: ready, or ready without some optional part.
    HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(app.dir));
    auto ready = assess(manifest, app);
    const std::string status(ready.at("status").as_string());
    if (status != "ready" && status != "ready-degraded") {
      std::string message = "'" + std::string(name) + "' is " + status + ":";
      for (const auto& b : ready.at("blockers").as_array()) {
        message += "\n  " + std::string(b.as_string());
      }
      for (const auto& s : ready.at("setupActions").as_array()) {
        message += "\n  to do: " + std::string(s.at("title").as_string()) + " (" +
                   std::string(s.at("target").as_string()) + ")";
      }
      json::object refused = detail;
      refused["readiness"] = ready;
      (void)log(name, "enable-refused", refused);
      return Error::make(ErrorCode::kPermissionDenied, message, json::value(std::move(ready)));
    }
    detail["readiness"] = ready.at("status");
    // Enabling is the review's approval: the package's storage migrations run now, each in
    // one transaction; one that fails leaves the app disabled.
    HEARTH_ASSIGN_OR_RETURN(auto data, open_data(app));
    auto applied = data->migrate(app.dir, manifest.front_matter);
    if (!applied.ok()) {
      json::object failed = detail;
      failed["error"] = applied.error().message;
      auto so_far = data->applied();
      failed["migrationsApplied"] = so_far.ok() ? std::move(so_far.value()) : json::array();
      (void)log(name, "enable-failed", failed);
      return std::move(applied).error();
    }
    detail["migrationsApplied"] = std::move(applied.value());
    // The person approved the review, which listed these: allow them (a deny rule still wins).
    json::array allowed;
    for (const auto& capability : declared_capabilities(manifest.front_matter)) {
      HEARTH_RETURN_IF_ERROR(grant(name, capability, "", true, "review"));
      allowed.emplace_back(capability);
    }
    detail["granted"] = std::move(allowed);
  }
  auto r = db_->execute("UPDATE apps SET enabled = ? WHERE name = ?",
                        {std::int64_t{enabled ? 1 : 0}, std::string(name)});
  if (!r.ok()) return std::move(r).error();
  HEARTH_RETURN_IF_ERROR(log(name, enabled ? "enable" : "disable", detail));
  changed(name, enabled ? "enable" : "disable");
  return {};
}

Result<json::object> AppStore::readiness(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(app.dir));
  return assess(manifest, app);
}

Status AppStore::report_backend(std::string_view app, std::string_view service, const fs::path& dir,
                                const json::object* report) {
  Result<std::int64_t> r = std::int64_t{0};
  if (report == nullptr) {
    r = db_->execute("DELETE FROM backend_reports WHERE app = ? AND service = ?",
                     {std::string(app), std::string(service)});
  } else {
    r = db_->execute(
        "INSERT INTO backend_reports (app, service, dir, report, at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (app, service) DO UPDATE SET dir = excluded.dir, report = excluded.report, "
        "at = excluded.at",
        {std::string(app), std::string(service), stored_dir(dir), json::serialize(*report),
         utc_now()});
  }
  if (!r.ok()) return std::move(r).error();
  return {};
}

Status AppStore::clear_backend_reports() {
  auto r = db_->execute("DELETE FROM backend_reports", {});
  if (!r.ok()) return std::move(r).error();
  return {};
}

Result<json::array> AppStore::backend_reports(std::string_view app) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows,
      db_->query("SELECT service, dir, report, at FROM backend_reports WHERE app = ? ORDER BY "
                 "service",
                 {std::string(app)}));
  json::array out;
  for (const auto& row : rows) {
    auto report = json::parse_text(std::get<std::string>(row[2]));
    json::object o =
        report.ok() && report.value().is_object() ? report.value().get_object() : json::object();
    o["service"] = std::get<std::string>(row[0]);
    o["dir"] = local_dir(std::get<std::string>(row[1])).string();
    o["reportedAt"] = std::get<std::string>(row[3]);
    out.emplace_back(std::move(o));
  }
  return out;
}

Status AppStore::grant(std::string_view name, std::string_view capability,
                       std::string_view workspace, bool allow, std::string_view by) {
  HEARTH_ASSIGN_OR_RETURN(auto app, find(name));
  if (capability.empty()) return Error::make(ErrorCode::kInvalidParams, "no capability named");
  auto r = db_->execute(
      "INSERT INTO grants (app, capability, workspace, allow, by, at) VALUES (?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (app, capability, workspace) DO UPDATE SET allow = excluded.allow, "
      "by = excluded.by, at = excluded.at",
      {std::string(name), std::string(capability), std::string(workspace),
       std::int64_t{allow ? 1 : 0}, std::string(by), utc_now()});
  if (!r.ok()) return std::move(r).error();
  return log(
      name, allow ? "grant" : "deny",
      json::object{{"capability", capability},
                   {"workspace", workspace.empty() ? json::value("*") : json::value(workspace)},
                   {"by", by},
                   {"version", app.version}});
}

Result<json::array> AppStore::grants(std::string_view name) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT capability, workspace, allow, by, at FROM grants WHERE app = ? "
                            "ORDER BY capability, workspace",
                            {std::string(name)}));
  json::array out;
  for (const auto& row : rows) {
    const std::string workspace = std::get<std::string>(row[1]);
    out.emplace_back(
        json::object{{"capability", std::get<std::string>(row[0])},
                     {"workspace", workspace.empty() ? json::value("*") : json::value(workspace)},
                     {"decision", std::get<std::int64_t>(row[2]) != 0 ? "allow" : "deny"},
                     {"by", std::get<std::string>(row[3])},
                     {"at", std::get<std::string>(row[4])}});
  }
  return out;
}

Result<std::string> AppStore::decision(std::string_view name, std::string_view capability,
                                       std::string_view workspace) {
  HEARTH_ASSIGN_OR_RETURN(
      auto rows, db_->query("SELECT allow FROM grants WHERE app = ? AND capability = ? AND "
                            "(workspace = '' OR workspace = ?)",
                            {std::string(name), std::string(capability), std::string(workspace)}));
  bool allowed = false;
  for (const auto& row : rows) {
    if (std::get<std::int64_t>(row[0]) == 0) return std::string("deny");
    allowed = true;
  }
  return std::string(allowed ? "allow" : "none");
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
  record["at"] = utc_now();
  std::error_code ec;
  const bool had_data = fs::exists(data, ec);
  const auto placement = placement_of(app);
  const bool on_server = placement.placement == kServerPostgresql;
  record["placement"] = placement.placement;
  // What holds the app's database lets go of it first (the bridge's kept connection).
  notify(app.name);
  switch (policy) {
    case DataPolicy::kKeep:
      if (on_server) {
        // Nothing is dropped: the schema and role stay, for the app installed again (and
        // dropped by an uninstall with delete then).
        record["data"] = "kept in " + engine_->describe() + " (its schema and role, " +
                         placement.isolation + "), and " +
                         (had_data ? "its files at " + data.string() : std::string("no files"));
      } else {
        record["data"] = had_data ? "kept at " + data.string() : std::string("none");
      }
      break;
    case DataPolicy::kDelete:
      if (on_server || had_data) HEARTH_RETURN_IF_ERROR(engine_->drop_app(placement));
      remove_tree(data);
      record["data"] = on_server  ? "deleted (its schema and role, and its files)"
                       : had_data ? std::string("deleted")
                                  : std::string("none");
      break;
    case DataPolicy::kExportThenDelete: {
      if (export_to.empty()) {
        return Error::make(ErrorCode::kInvalidParams,
                           "export-then-delete needs a file to export to");
      }
      // A local app's database is its file, in the data folder; an app's tables on the server
      // are written as data (tables/, AppData::export_tables) beside its files.
      std::vector<ExportedFile> tables;
      if (on_server) {
        HEARTH_ASSIGN_OR_RETURN(auto opened, open_data(app));
        HEARTH_ASSIGN_OR_RETURN(tables, opened->export_tables(engine_->kind()));
        for (auto& t : tables) t.name = "tables/" + t.name;
      }
      HEARTH_ASSIGN_OR_RETURN(auto files, export_tree(data, export_to, tables));
      if (on_server || had_data) HEARTH_RETURN_IF_ERROR(engine_->drop_app(placement));
      remove_tree(data);
      record["data"] = "exported to " + export_to.string() + " (" + std::to_string(files) +
                       " files), then deleted";
      record["export"] = export_to.string();
      break;
    }
  }
  // Every version kept of it: the installed one and the one a rollback would return to.
  const fs::path versions = root_ / "packages" / app.name;
  remove_tree(versions);
  record["package"] = "removed " + app.dir.string();
  auto r = db_->execute("DELETE FROM apps WHERE name = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  r = db_->execute("DELETE FROM grants WHERE app = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  r = db_->execute("DELETE FROM package_files WHERE app = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  r = db_->execute("DELETE FROM app_package_files WHERE app = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  r = db_->execute("DELETE FROM backend_reports WHERE app = ?", {std::string(name)});
  if (!r.ok()) return std::move(r).error();
  if (auto logged = log(name, "uninstall", record); !logged.ok()) return std::move(logged).error();
  changed(app.name, "uninstall");
  const fs::path file = root_ / "cleanup" / (app.name + "-" + random_hex(4) + ".json");
  record["record"] = file.string();
  if (auto w = write_file_atomic(file, json::serialize(record) + "\n"); !w.ok()) {
    return std::move(w).error();
  }
  return record;
}

}  // namespace hearth::agentapp
