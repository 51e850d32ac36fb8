#pragma once
/// The installed Agent Apps of a state dir (docs/agent-apps.md, "Installing"):
/// `<state>/apps/` holds `apps.db` (the apps and an append-only log of what was done to them),
/// `packages/<name>/<version>-<hash>/` (each installed package, read-only), `data/<name>/`
/// (what an app stores), `trust/` (publisher keys and the revocation list), `cleanup/` (the
/// record each uninstall leaves) and `staging/` (packages being checked).
///
/// An install stages the package (staging.hpp), reads its manifest with a real YAML parser
/// (native.hpp), verifies it (verify.hpp) and records it disabled, with the review of what it
/// would add; nothing of it is enabled or run by installing.

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
  InstalledApp app;    ///< as installed after the call (the old version when it stopped)
  json::object added;  ///< capabilities, permissions, networkHosts, migrations, backends
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
  static Result<std::unique_ptr<AppStore>> open(const std::filesystem::path& state_dir);

  /// Installs the package folder or .tar.gz archive at `source`. Unsigned and zero-hash
  /// packages need `dev`; a package whose signature is wrong never installs.
  Result<InstallResult> install(const std::filesystem::path& source, bool dev);

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

  TrustStore& trust() { return trust_; }
  std::filesystem::path data_dir(std::string_view name) const;

 private:
  struct Staged;
  Result<Staged> stage_and_verify(const std::filesystem::path& source, bool dev);
  Result<InstalledApp> place(Staged& staged);

  AppStore(std::filesystem::path root, std::unique_ptr<storage::Database> db);
  Status log(std::string_view app, std::string_view action, const json::object& detail);
  Result<json::array> log_of(std::string_view app);

  std::filesystem::path root_;
  std::unique_ptr<storage::Database> db_;
  TrustStore trust_;
  ReadinessContext readiness_;
};

/// The review of a manifest (what InstallResult::review holds).
json::object review_of(const AppManifest& manifest, const Verified& verified);

}  // namespace hearth::agentapp
