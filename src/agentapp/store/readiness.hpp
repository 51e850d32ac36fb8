#pragma once
/// The host's readiness of an installed app (docs/agent-apps.md, "Readiness"): what hearth can
/// actually give the app now - the capabilities it provides, the secrets in the vault, the
/// bindings it supports, the app's lifecycle dates, its migrations - as `ready`,
/// `ready-degraded`, `needs-setup` or `blocked`, with the checks, the blockers, the warnings
/// and the setup actions a person must take. The result follows the format's readiness schema.
/// Enabling an app needs `ready` or `ready-degraded`.

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agentapp/store/native.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

/// The vault variable that holds the app secret `key`: the vault's names are
/// [A-Za-z_][A-Za-z0-9_]*, so every other character becomes '_' (and a leading digit gets one
/// before it): `sync-token` is `sync_token`, in the scope `app.<name>`.
std::string secret_variable(std::string_view key);

struct ReadinessContext {
  /// The capabilities the host provides (the bridge's).
  std::vector<std::string> provided;
  /// Whether the app's secret is set: `variable` is secret_variable(key), looked up in the
  /// vault's scope `app.<app>`. Unset: no vault, every required secret is missing.
  std::function<bool(std::string_view app, std::string_view variable)> secret_present;
  /// Whether the host runs app backends (supervised, under the jail).
  bool runs_backends = false;
  /// The versions hearth implements, for the app's ranges: each provided capability's, the
  /// `requires.lime` names it knows (appRuntime) and `sdk` (the bridge). A range that excludes
  /// them blocks the app (an entry's or a service's only capability: degrades it).
  std::map<std::string, std::string, std::less<>> versions;
};

/// The readiness result: {ok, status, command: "readiness", app, workspace: null, checks,
/// blockers, warnings, setupActions}.
json::object assess_readiness(const AppManifest& manifest, const std::filesystem::path& package,
                              const ReadinessContext& context);

/// Adds to a readiness result what the daemon reported of backends that do not come up
/// (AppStore::backend_reports: {service, required, reason, failures, stderrTail}): each one's
/// check of kind `backend` becomes a failing one saying why, with the end of its stderr; a
/// required backend blocks the app, another degrades it.
void add_backend_failures(json::object& readiness, const json::array& reports);

}  // namespace hearth::agentapp
