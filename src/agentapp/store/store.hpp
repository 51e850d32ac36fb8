#pragma once
/// The installed Agent Apps of a state dir (docs/agent-apps.md, "Installing"):
/// `<state>/apps/` holds `apps.db` (the apps and an append-only log of what was done to them),
/// `packages/<name>/<version>-<hash>/` (each installed package, read-only), `data/<name>/`
/// (what an app stores), `trust/` (publisher keys and the revocation list), `cleanup/` (the
/// record each uninstall leaves) and `staging/` (packages being checked).
///
/// An install stages the package (staging.hpp), reads its manifest with a real YAML parser
/// (native.hpp), verifies it (verify.hpp) and records it disabled, with the review of what it
/// would add, and the list of its files with their hashes (integrity.hpp); nothing of it is
/// enabled or run by installing. The installed files are checked against that list whenever
/// the app is enabled, when the daemon starts and before any of its code is started.
///
/// Everything is stored through the daemon's storage engine (storage/engine.hpp): `apps.db` is
/// its "apps" database, and each app's own tables are where its `storage.placement` puts them
/// (appdata.hpp). On an engine other daemons share (PostgreSQL), the apps table is theirs too:
/// each installed package's files are kept in the database as well, and a daemon that finds an
/// installed package missing from its own `packages/` unpacks it from there, checked against
/// the files recorded at install; every change is told to the other daemons on the bus.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agentapp/store/integrity.hpp"
#include "agentapp/store/native.hpp"
#include "agentapp/store/readiness.hpp"
#include "agentapp/store/signature.hpp"
#include "agentapp/store/verify.hpp"
#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"
#include "storage/storage.hpp"

namespace hearth::agentapp {

class AppData;

struct InstalledApp {
  std::string name;
  std::string version;
  std::filesystem::path dir;  ///< the installed package
  std::string package_hash;
  std::string manifest_hash;
  std::string trust;  ///< to_string(Trust)
  std::string publisher;
  std::string key;
  std::string installed_at;
  bool enabled = false;

  bool dev() const { return trust != "signed"; }
  json::object to_json() const;
};

/// What a new version adds to the installed one (docs/agent-apps.md, "Upgrade and rollback").
struct UpgradeResult {
  InstalledApp app;  ///< as installed after the call (the old version when it stopped)
  /// capabilities, permissions, networkHosts, migrations, backends, operations
  json::object added;
  bool needs_approval = false;
  bool upgraded = false;
  json::array migrations_applied;
};

struct InstallResult {
  InstalledApp app;
  /// What the app would add: entries, capabilities, permissions, network hosts, storage,
  /// backends and other services, secrets (docs/agent-apps.md, "The review").
  json::object review;
};

/// What an uninstall does with the app's data. kKeep: nothing is removed (an app on
/// PostgreSQL keeps its schema and role until it is installed again and uninstalled with
/// kDelete). kDelete: Engine::drop_app, and the data folder. kExportThenDelete: the data
/// written to an archive first (the data folder; for an app on PostgreSQL its tables as JSON
/// Lines too, AppData::export_tables), then as kDelete.
enum class DataPolicy { kKeep, kDelete, kExportThenDelete };

class AppStore {
 public:
  /// Opens (or makes) `<state_dir>/apps/` with `apps.db` opened through `engine` (its "apps"
  /// database), and removes what killed installs left in `staging/`. The store keeps the engine
  /// for the apps' own databases; on a shared engine it listens to the bus for other daemons'
  /// changes (on_changed).
  static Result<std::unique_ptr<AppStore>> open(const std::filesystem::path& state_dir,
                                                std::shared_ptr<storage::Engine> engine);
  ~AppStore();
  AppStore(const AppStore&) = delete;
  AppStore& operator=(const AppStore&) = delete;

  /// Removes the staging entries of installs and upgrades that are gone (killed mid-way), never
  /// one that a running install holds (staging.hpp). Runs at open and at the start and end of
  /// every install and upgrade. Returns the names removed.
  std::vector<std::string> clean_staging();

  /// Installs the package folder or .tar.gz archive at `source`. Unsigned and zero-hash
  /// packages need `dev`; a package whose signature is wrong never installs. `strict`: an
  /// APP.md front-matter key the format does not define (unknown_front_matter_keys) refuses it.
  Result<InstallResult> install(const std::filesystem::path& source, bool dev, bool strict = false);

  /// Upgrades the installed app named by the package at `source` to its version. What the new
  /// version adds (capabilities, permissions, network hosts, migrations, backends) needs
  /// `approve`; without it nothing changes and the result lists what waits for approval. The
  /// old version's package is kept: when the app is enabled the new migrations run first, and
  /// if one fails the old version stays installed. The new capabilities are granted when
  /// approved.
  Result<UpgradeResult> upgrade(const std::filesystem::path& source, bool dev, bool approve);
  /// Returns to the version installed before the last upgrade (and keeps the newer one, so a
  /// second rollback goes forward again). Migrations are not undone: the data keeps its schema.
  Result<InstalledApp> rollback(std::string_view name);

  Result<std::vector<InstalledApp>> list();
  Result<InstalledApp> find(std::string_view name);
  /// The app, its review (read again from the installed package) and its log.
  Result<json::object> show(std::string_view name);
  /// Enabling applies the package's storage migrations first (AppData::migrate); when one
  /// fails the app stays disabled and the log records the failure.
  Status set_enabled(std::string_view name, bool enabled);
  /// Removes the app's package and record. Its data is kept, deleted, or written to
  /// `export_to` (a .tar.gz) and then deleted; the cleanup record is returned and written to
  /// `cleanup/`.
  Result<json::object> uninstall(std::string_view name, DataPolicy policy,
                                 const std::filesystem::path& export_to = {});

  /// Grants (docs/agent-apps.md, "Grants"): `allow` or deny `capability` to the app, for one
  /// workspace or (empty) every workspace. Enabling an app allows what its review listed.
  /// Each grant and denial is logged.
  Status grant(std::string_view name, std::string_view capability, std::string_view workspace,
               bool allow, std::string_view by);
  Result<json::array> grants(std::string_view name);
  /// The decision for a call, deny rules first: a deny for the workspace or for every workspace
  /// wins; else an allow for either; else none. "allow", "deny" or "none".
  Result<std::string> decision(std::string_view name, std::string_view capability,
                               std::string_view workspace);
  /// Logs a decision of the capability bridge (a denial) in the app's log.
  Status record(std::string_view name, std::string_view action, const json::object& detail) {
    return log(name, action, detail);
  }

  /// What the host can give apps, for readiness (the bridge's capabilities, the vault).
  void set_readiness_context(ReadinessContext context) { readiness_ = std::move(context); }
  /// The host's readiness of an installed app (readiness.hpp).
  Result<json::object> readiness(std::string_view name);

  /// The integrity check (docs/agent-apps.md): what differs between the installed package
  /// folder of `app` and the files recorded when it was placed - one line a file, naming it
  /// ("services/backend.py changed since install"); empty when nothing does. A package placed
  /// before the lists were recorded is checked against its package hash instead (and its list
  /// recorded once that holds). Reads and hashes every file: call it off I/O threads.
  Result<std::vector<std::string>> integrity_problems(const InstalledApp& app);
  /// Checks `app` (as found by find(), or the package a supervisor is about to start): when
  /// its files changed, the app is disabled (if it is still enabled at that package),
  /// `integrity-failed` is logged with the problems and `when` (what was about to happen), and
  /// the error (kPermissionDenied) names each file, with data {app, version, dir, problems}.
  Status verify_installed(const InstalledApp& app, std::string_view when);
  /// verify_installed for every enabled app (the daemon, at start): the errors of those it
  /// disabled.
  Result<std::vector<Error>> verify_enabled(std::string_view when);

  /// What the daemon's supervisor reports of a backend that does not come up (it cannot
  /// start, exits before answering `initialize`, or never answers it): `report` {state,
  /// required, reason, failures, stderrTail, ...} for the package folder `dir`, shown by show()
  /// (`backends`, and a failing check in its readiness); null when it runs again or is no
  /// longer supervised. Only what people read: enabling and starting an app do not look at it.
  Status report_backend(std::string_view app, std::string_view service,
                        const std::filesystem::path& dir, const json::object* report);
  /// Forgets every report: a daemon that starts supervises afresh.
  Status clear_backend_reports();
  /// The reports of the app's backends ({service, dir, reportedAt} and the report's members).
  Result<json::array> backend_reports(std::string_view app);

  TrustStore& trust() { return trust_; }
  std::filesystem::path data_dir(std::string_view name) const;
  storage::Engine& engine() { return *engine_; }

  /// Where the installed app keeps its tables (its manifest's storage block, appdata.hpp). A
  /// package whose manifest cannot be read is local-sqlite, as hearth always kept it.
  storage::AppPlacement placement_of(const InstalledApp& app);
  /// The installed app's own database, where its placement puts it (AppData::open).
  Result<std::unique_ptr<AppData>> open_data(const InstalledApp& app);

  /// Calls `listener` with the name of an app after it changed (installed, enabled, disabled,
  /// upgraded, rolled back, uninstalled), through this store or, on a shared engine, through
  /// another daemon (a notice on the bus: the listener then runs on the bus's thread, and must
  /// be quick); with an empty name when every app may have changed (the bus reconnected). The
  /// store itself caches nothing of an app: every call reads the database. The id ends it.
  std::uint64_t on_changed(std::function<void(std::string_view app)> listener);
  void remove_on_changed(std::uint64_t id);

 private:
  struct Staged;
  /// Sweeps the staging folder when it goes out of scope (the end of an install or upgrade).
  class StagingSweep {
   public:
    explicit StagingSweep(AppStore& store) : store_(&store) {}
    StagingSweep(const StagingSweep&) = delete;
    StagingSweep& operator=(const StagingSweep&) = delete;
    ~StagingSweep() { store_->clean_staging(); }

   private:
    AppStore* store_;
  };
  Result<Staged> stage_and_verify(const std::filesystem::path& source, bool dev);
  /// Moves the staged package into `packages/`, read-only, and records its files.
  Result<InstalledApp> place(Staged& staged);
  /// Removes a placed package that was not recorded after all, with its list of files.
  void discard_package(const std::filesystem::path& dir);

  AppStore(std::filesystem::path root, std::shared_ptr<storage::Engine> engine,
           std::unique_ptr<storage::Database> db);
  Status log(std::string_view app, std::string_view action, const json::object& detail);
  Result<json::array> log_of(std::string_view app);

  /// A package folder as the database keeps it: on a shared engine relative to `apps/`
  /// ("packages/<name>/<folder>": each daemon has its own state dir), else the path.
  std::string stored_dir(const std::filesystem::path& dir) const;
  std::filesystem::path local_dir(std::string_view stored) const;
  InstalledApp app_of_row(const storage::Row& row) const;
  /// Refuses a placement this engine cannot hold (server-postgresql on SQLite), saying how.
  Status placement_supported(const storage::AppPlacement& placement) const;
  /// assess_readiness, with a blocker for a placement this engine cannot hold.
  json::object assess(const AppManifest& manifest, const InstalledApp& app);
  /// On a shared engine: the installed package's folder, unpacked from the database when it is
  /// not in this daemon's `packages/` yet, and checked against the files recorded at install
  /// (refused, kPermissionDenied, naming each file, when it differs). Nothing otherwise.
  Status ensure_local(const InstalledApp& app);
  /// On a shared engine: keeps the placed package's files in the database (ensure_local).
  Status save_package_files(const InstalledApp& app, const PackageTree& tree);
  /// Tells the listeners (on_changed) and, on a shared engine, the other daemons.
  void changed(std::string_view app, std::string_view action);
  void notify(std::string_view app);

  std::filesystem::path root_;
  std::shared_ptr<storage::Engine> engine_;
  std::unique_ptr<storage::Database> db_;
  TrustStore trust_;
  ReadinessContext readiness_;
  std::mutex unpack_mutex_;  // one unpacking of a package from the database at a time
  std::mutex listeners_mutex_;
  std::map<std::uint64_t, std::function<void(std::string_view)>> listeners_;
  std::uint64_t next_listener_ = 1;
  std::uint64_t bus_subscription_ = 0;
  std::uint64_t bus_resync_ = 0;
};

/// The review of a manifest (what InstallResult::review holds), its package in `package` (for
/// the layered operations file).
json::object review_of(const AppManifest& manifest, const Verified& verified,
                       const std::filesystem::path& package);

}  // namespace hearth::agentapp
