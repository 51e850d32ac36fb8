#pragma once
/// The model servers a daemon is configured with, and how a run's choice of model becomes a
/// ModelConfig without letting a caller send a key where the key's owner did not (docs/security.md,
/// "Model servers and their keys").
///
/// - A configured server (`--model-url`/`--model`/`--model-key` as "default", more with
///   `--model-server NAME=URL` and `--model-server-key NAME=SCOPE::NAME`) has its key bound to it
///   by the operator: that key goes to that server and nowhere else.
/// - A run may pick a configured server (`model.server`, or a `baseUrl` equal to a configured
///   one's) or name a new one (`baseUrl`). A new one gets no configured key; it must be https and
///   may not resolve to this machine or a private network (`ModelConfig::public_only`).
/// - A key a run names itself (`model.apiKeyRef`) is read under the vault's rule for A2S: a
///   variable scoped to a domain goes only to that domain (the server's host, with its port when
///   it is not the scheme's default), a global one only to a domain `hearth vault trust` granted
///   it to. The configured key of the chosen server is the one exception (bound by the operator).

#include <optional>
#include <string>
#include <vector>

#include "agent/model.hpp"
#include "common/result.hpp"

namespace hearth::agent {

struct ModelServer {
  std::string name{};      ///< "default" for --model-url
  std::string base_url{};  ///< without trailing slashes
  std::string model{};     ///< the model a run gets unless it names one; may be empty
  std::string key_ref{};   ///< the vault variable of its key (SCOPE::NAME); empty: none
  bool stream = false;
  ToolMode tools = ToolMode::kAuto;
};

/// What a run asks for (agent/run's `model` object); every member optional.
struct ModelChoice {
  std::optional<std::string> server{};
  std::optional<std::string> base_url{};
  std::optional<std::string> model{};
  std::optional<std::string> key_ref{};
  std::optional<bool> stream{};
  std::optional<ToolMode> tools{};
};

/// A choice made concrete: the configuration (without its key) and the key to read.
struct ResolvedModel {
  ModelConfig config;
  std::string server;   ///< the configured server's name; empty for one the run named
  std::string key_ref;  ///< empty: no key
  /// Empty: the key is the server's configured one (read as it is). Otherwise the domain the
  /// vault must allow the variable to go to (its scope, or a trust grant for a global one).
  std::string key_domain;
};

class ModelServers {
 public:
  /// Adds a configured server; kInvalidParams for a bad URL, a duplicate name or a key
  /// reference that is not SCOPE::NAME.
  Status add(ModelServer server);
  /// Binds a vault variable as the key of the server `name`.
  Status set_key(const std::string& name, const std::string& key_ref);
  const ModelServer* find(std::string_view name) const;
  const std::vector<ModelServer>& list() const { return servers_; }
  bool empty() const { return servers_.empty(); }

  /// Applies the rules above; `base` carries the limits and defaults every run shares.
  /// kInvalidParams for what the caller must change, kPermissionDenied for a key the rules
  /// refuse to send where it asked.
  Result<ResolvedModel> resolve(const ModelChoice& choice, const ModelConfig& base) const;

 private:
  const ModelServer* find_url(std::string_view base_url) const;
  std::vector<ModelServer> servers_;
};

/// The domain a vault variable must be scoped to (or trusted for) to go to `base_url`: its host,
/// with ":port" when the port is not the scheme's default (as A2S domains are written).
Result<std::string> key_domain_of(std::string_view base_url);

/// "http://h:1/v1/" -> "http://h:1/v1": a base URL without trailing slashes.
std::string normalize_base_url(std::string_view base_url);

}  // namespace hearth::agent
