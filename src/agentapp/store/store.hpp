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

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "agentapp/store/native.hpp"
#include "agentapp/store/readiness.hpp"
#include "agentapp/store/signature.hpp"
#include "agentapp/store/verify.hpp"
#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/storage.hpp"

namespace hearth::agentapp {

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

enum class DataPolicy { kKeep, kDelete, kExportThenDelete };

class AppStore {
 public:
  /// Opens (or makes) `<state_dir>/apps/` and removes what killed installs left in `staging/`.
  static Result<std::unique_ptr<AppStore>> open(const std::filesystem::path& state_dir);

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

  AppStore(std::filesystem::path root, std::unique_ptr<storage::Database> db);
  Status log(std::string_view app, std::string_view action, const json::object& detail);
  Result<json::array> log_of(std::string_view app);

  std::filesystem::path root_;
  std::unique_ptr<storage::Database> db_;
  TrustStore trust_;
  ReadinessContext readiness_;
};

/// The review of a manifest (what InstallResult::review holds), its package in `package` (for
/// the layered operations file).
json::object review_of(const AppManifest& manifest, const Verified& verified,
                       const std::filesystem::path& package);

}  // namespace hearth::agentapp
