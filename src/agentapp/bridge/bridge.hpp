#pragma once
/// The capability bridge (docs/agent-apps.md, "The capability bridge"): every call an Agent App
/// makes to the host - from its backend or, through the view host, its UI - arrives here as
/// `capability/invoke` and passes, in order: the app is installed and enabled; the capability is
/// declared by the app; hearth provides it (readiness: it is in the bridge's registry of
/// capabilities, capability.hpp); a grant allows it for the workspace, deny rules first; the
/// app's declared permissions cover the method (policy). Then it runs, and the call or its
/// denial is recorded in the app's evidence log. A denial is a structured error, never a
/// made-up success.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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

class Bridge {
 public:
  /// `store` must outlive the bridge. It serves the built-in capabilities.
  explicit Bridge(AppStore& store);
  /// A bridge serving `capabilities` (tests, embeddings with capabilities of their own).
  Bridge(AppStore& store, std::shared_ptr<const CapabilityRegistry> capabilities);

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
  /// The app's manifest, read once per installed package folder (under mutex_).
  Result<std::reference_wrapper<const AppManifest>> manifest_of(const InstalledApp& app);
  /// The app's storage, opened once and kept while its database file is the same one: an
  /// uninstall that deleted the data, and a new install, make another file, opened anew. The
  /// file is held open (`file`) so that its inode cannot be reused meanwhile. Under mutex_.
  Result<std::shared_ptr<AppData>> data_of(std::string_view app);
  /// The checks after `enabled` (declared, ready, granted, policy), each refusal recorded
  /// through `refuse`: the capability to run.
  Result<const Capability*> admit(const Invocation& call, const AppManifest& manifest,
                                  const Refuse& refuse);
  /// Runs the admitted call, and records it when it succeeded.
  static Result<json::value> run(const Capability& capability, CallContext& context);

  struct OpenData {
    Fd file;  ///< the database file as it was opened
    std::shared_ptr<AppData> data;
  };

  std::mutex mutex_;  // one call at a time per bridge: the app databases are kept open here
  AppStore& store_;
  std::shared_ptr<const CapabilityRegistry> capabilities_;
  std::map<std::string, std::pair<std::filesystem::path, AppManifest>> manifests_;
  std::map<std::string, OpenData, std::less<>> data_;
};

}  // namespace hearth::agentapp
