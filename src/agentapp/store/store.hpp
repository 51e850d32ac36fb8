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

  Result<std::vector<InstalledApp>> list();
  Result<InstalledApp> find(std::string_view name);
  /// The app, its review (read again from the installed package) and its log.
  Result<json::object> show(std::string_view name);
  Status set_enabled(std::string_view name, bool enabled);
  /// Removes the app's package and record. Its data is kept, deleted, or written to
  /// `export_to` (a .tar.gz) and then deleted; the cleanup record is returned and written to
  /// `cleanup/`.
  Result<json::object> uninstall(std::string_view name, DataPolicy policy,
                                 const std::filesystem::path& export_to = {});

  TrustStore& trust() { return trust_; }
  std::filesystem::path data_dir(std::string_view name) const;

 private:
  AppStore(std::filesystem::path root, std::unique_ptr<storage::Database> db);
  Status log(std::string_view app, std::string_view action, const json::object& detail);
  Result<json::array> log_of(std::string_view app);

  std::filesystem::path root_;
  std::unique_ptr<storage::Database> db_;
  TrustStore trust_;
};

/// The review of a manifest (what InstallResult::review holds).
json::object review_of(const AppManifest& manifest, const Verified& verified);

}  // namespace hearth::agentapp
