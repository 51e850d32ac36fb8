#pragma once
/// The capability bridge (docs/agent-apps.md, "The capability bridge"): every call an Agent App
/// makes to the host - from its backend or, through the view host, its UI - arrives here as
/// `capability/invoke` and passes, in order: the app is installed and enabled; the capability is
/// declared by the app; hearth provides it (readiness: it is in the bridge's registry of
/// capabilities, capability.hpp); a grant allows it for the workspace, deny rules first; the
/// app's declared permissions cover the method (policy). Then it runs, and the call or its
/// denial is recorded in the app's evidence log. A denial is a structured error, never a
/// made-up success.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/bridge/capability.hpp"
#include "agentapp/store/store.hpp"
#include "common/fd.hpp"
#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

/// The capabilities hearth provides, with their methods (make_builtin_capabilities()).
const json::object& provided_capabilities();

/// The readiness context of a host with this bridge: its capabilities, and `secret_present`.
ReadinessContext host_readiness(
    std::function<bool(std::string_view app, std::string_view key)> secret_present);
/// The same for a bridge serving `capabilities`.
ReadinessContext host_readiness(
    const CapabilityRegistry& capabilities,
    std::function<bool(std::string_view app, std::string_view key)> secret_present);

/// Calls of one app run one at a time (they share its database connection and its evidence
/// chain); calls of different apps run at the same time.
class Bridge {
 public:
  /// `store` must outlive the bridge. It serves the built-in capabilities. The bridge listens
  /// to the store's changes (AppStore::on_changed): what it keeps of an app that changed (its
  /// manifest, its database connection) is read again at its next call.
  explicit Bridge(AppStore& store);
  /// A bridge serving `capabilities` (tests, embeddings with capabilities of their own).
  Bridge(AppStore& store, std::shared_ptr<const CapabilityRegistry> capabilities);
  ~Bridge();
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  /// Runs the call or answers why not: kPermissionDenied errors carry
  /// data {stage: "enabled"|"declared"|"ready"|"granted"|"policy", capability, method, reason}.
  Result<json::value> invoke(const Invocation& call);

  /// `capability/list`: every capability the app declares, with `status` available or blocked
  /// and, when blocked, the stage and reason; the methods of the available ones.
  Result<json::array> list(std::string_view app, std::string_view workspace);

  /// The app's evidence after sequence `after`, and whether its chain verifies: {appId, entries,
  /// verified, problem?}. For the host's own readers (the App Server's evidence/export).
  Result<json::value> evidence(std::string_view app, std::int64_t after);

  /// Appends an entry of the host's own (`kind`, e.g. "backend.started") to the app's evidence
  /// log, with the package's provenance.
  Status record(std::string_view app, std::string_view kind, const json::object& detail);

 private:
  struct OpenData {
    Fd file;          ///< local-sqlite: the database file as it was opened
    std::string key;  ///< server-postgresql: the installed package it was opened for
    std::shared_ptr<AppData> data;
  };

  /// What the bridge keeps of one app, and the lock its calls take.
  struct AppState {
    /// Held for the whole of a call of the app (invoke, record, evidence, list): its kept
    /// database connection, its evidence chain and the caches below are one call's at a time.
    std::mutex mutex;
    /// The manifest of the package folder `first`.
    std::optional<std::pair<std::filesystem::path, AppManifest>> manifest;
    std::optional<OpenData> data;
    /// Set when the app changed (the store told): the two above are dropped at its next call.
    std::atomic<bool> stale{false};
  };

  /// The app's state, made at its first call. Entries are never removed, so that two calls of
  /// an app always find the same lock.
  std::shared_ptr<AppState> state_of(std::string_view app);
  /// The app's manifest, read once per installed package folder (under the app's lock).
  static Result<std::reference_wrapper<const AppManifest>> manifest_of(AppState& state,
                                                                       const InstalledApp& app);
  /// The app's storage, where its placement puts it (AppStore::open_data), opened once and
  /// kept: a local-sqlite app's while its database file is the same one (an uninstall that
  /// deleted the data, and a new install, make another file, opened anew; the file is held open,
  /// `file`, so that its inode cannot be reused meanwhile); a server-postgresql app's while it
  /// is the same installed package (and the store tells of no change). Under the app's lock.
  Result<std::shared_ptr<AppData>> data_of(AppState& state, const InstalledApp& app,
                                           const AppManifest& manifest);
  /// Drops what was kept of a changed app at its next call (`app` empty: of every app), at once
  /// when no call holds it.
  void forget(std::string_view app);
  /// Under the app's lock, before anything kept is used.
  static void refresh(AppState& state);
  /// The checks after `enabled` (declared, ready, granted, policy), each refusal recorded
  /// through `refuse`: the capability to run.
  Result<const Capability*> admit(const Invocation& call, const AppManifest& manifest,
                                  const Refuse& refuse);
  /// Runs the admitted call, and records it when it succeeded.
  static Result<json::value> run(const Capability& capability, CallContext& context);

  AppStore& store_;
  std::shared_ptr<const CapabilityRegistry> capabilities_;
  std::mutex apps_mutex_;  // guards apps_ only, never held during a call
  std::map<std::string, std::shared_ptr<AppState>, std::less<>> apps_;
  std::uint64_t listener_ = 0;  // AppStore::on_changed
};

}  // namespace hearth::agentapp
