#pragma once
/// The host's readiness of an installed app (docs/agent-apps.md, "Readiness"): what hearth can
/// actually give the app now - the capabilities it provides, the secrets in the vault, the
/// bindings it supports, the app's lifecycle dates, its migrations - as `ready`,
/// `ready-degraded`, `needs-setup` or `blocked`, with the checks, the blockers, the warnings
/// and the setup actions a person must take. The result follows the format's readiness schema.
/// Enabling an app needs `ready` or `ready-degraded`.

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agentapp/store/native.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

struct ReadinessContext {
  /// The capabilities the host provides (the bridge's).
  std::vector<std::string> provided;
  /// Whether the secret `key` of the app is set (the vault, scope `app.<name>`); unset: no
  /// vault, every required secret is missing.
  std::function<bool(std::string_view app, std::string_view key)> secret_present;
  /// Whether the host runs app backends (supervised, under the jail).
  bool runs_backends = false;
};

/// The readiness result: {ok, status, command: "readiness", app, workspace: null, checks,
/// blockers, warnings, setupActions}.
json::object assess_readiness(const AppManifest& manifest, const std::filesystem::path& package,
                              const ReadinessContext& context);

}  // namespace hearth::agentapp
