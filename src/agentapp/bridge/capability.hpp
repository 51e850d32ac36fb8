#pragma once
/// The capabilities the bridge serves (docs/agent-apps.md, "The capability bridge") are
/// extensions: each family (lime.storage, lime.artifacts, ...) implements `Capability` - its
/// name, its methods with the permission each needs, and what a call does - and is registered
/// by name in `make_builtin_capabilities()` (builtin.cpp). The bridge's checks (enabled,
/// declared, ready, granted, policy) and its evidence stay in the bridge; a capability sees only
/// calls that passed them.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/records/records.hpp"
#include "agentapp/store/native.hpp"
#include "agentapp/store/store.hpp"
#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

struct Invocation {
  std::string app;
  std::string workspace;  ///< empty: the default workspace
  std::string capability;
  std::string method;
  json::value params;  ///< an object, or null
  /// Who made the call, for the evidence: "daemon" (a client of the daemon's RPC) or
  /// "backend:<service key>" (the app's own backend, over its stdio).
  std::string caller = "daemon";
};

/// What a method needs the app to have declared (the policy stage): a permission of `scope`
/// whose access covers `access` ("read" or "write"). An empty scope needs nothing.
struct Permission {
  std::string_view scope;
  std::string_view access;
};

/// Refuses the call at `stage` for `reason`: the denial is recorded in the app's evidence and
/// its log, and returned as the error (kPermissionDenied, data {stage, capability, method,
/// reason}).
using Refuse = std::function<Error(std::string_view stage, std::string reason)>;

/// One call that passed the bridge's checks, with what the app has. The bridge holds the app's
/// lock for its whole lifetime: its database and evidence are the capability's alone meanwhile.
struct CallContext {
  const Invocation& call;
  const InstalledApp& app;
  const AppManifest& manifest;
  AppData& data;
  EvidenceLog& evidence;
  Provenance provenance;
  std::filesystem::path data_dir;  ///< the app's data folder (its database, artifact blobs)
  /// The detail of the call's `capability.invoked` evidence entry: {capability, method,
  /// workspace, caller} to begin with; a capability adds what the call touched (a key, an id).
  json::object summary;
  /// For a refusal found only while running (an artifact type the app does not declare).
  Refuse refuse;

  /// `params.<key>`, or nullptr.
  const json::value* param(std::string_view key) const;
  /// `params.<key>` as a non-empty string, else kInvalidParams naming it.
  Result<std::string> string_param(std::string_view key) const;
};

class Capability {
 public:
  struct Method {
    std::string_view name;
    Permission needs;
  };

  virtual ~Capability() = default;
  /// The name apps declare and call it by ("lime.storage").
  virtual std::string_view name() const = 0;
  /// Its methods, each with the permission it needs.
  virtual const std::vector<Method>& methods() const = 0;
  /// What this call of `method` needs the app to have declared. The method's own permission,
  /// unless the parameters change it (a lime.storage.query statement that writes).
  virtual Permission needs(const Method& method, const Invocation& call) const {
    (void)call;
    return method.needs;
  }
  /// Whether a call that succeeded is recorded as `capability.invoked`. False for a capability
  /// whose calls are the evidence itself (lime.evidence).
  virtual bool recorded() const { return true; }
  /// Runs the call; its method is one of methods().
  virtual Result<json::value> invoke(CallContext& context) const = 0;

  /// The method named `name`, or nullptr.
  const Method* method(std::string_view name) const;
};

/// Capabilities by name.
class CapabilityRegistry {
 public:
  /// Adds `capability` under its name, replacing one of the same name.
  void add(std::unique_ptr<Capability> capability);
  const Capability* find(std::string_view name) const;
  /// {capability: [method, ...]}: every capability, and the methods of each, in name order.
  const json::object& provided() const { return provided_; }

 private:
  std::map<std::string, std::unique_ptr<Capability>, std::less<>> capabilities_;
  json::object provided_;
};

/// The registry of every capability hearth provides: lime.storage, lime.artifacts,
/// lime.evidence and lime.agent.
std::shared_ptr<const CapabilityRegistry> make_builtin_capabilities();

/// The built-in families (one file each), registered by make_builtin_capabilities().
std::unique_ptr<Capability> make_storage_capability();
std::unique_ptr<Capability> make_artifacts_capability();
std::unique_ptr<Capability> make_evidence_capability();
std::unique_ptr<Capability> make_agent_capability();

}  // namespace hearth::agentapp
