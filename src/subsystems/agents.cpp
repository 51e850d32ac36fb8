#include "subsystems/agents.hpp"

#include "common/ascii.hpp"
#include "methods/vault/vault.hpp"
#include "subsystems/audit.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/workspaces.hpp"

namespace hearth::subsystems {

namespace {

/// The model servers of --model-url (named "default", first) and --model-server, with the keys
/// of --model-key and --model-server-key bound to them.
Status configure_model_servers(const daemon::Options& options, agent::ModelServers& servers) {
  const auto tools = agent::parse_tool_mode(options.model_tools);
  if (!tools) {
    return Error::make(ErrorCode::kInvalidParams, "--model-tools is auto, native or prompt, not '" +
                                                      options.model_tools + "'");
  }
  if (!options.model_url.empty()) {
    HEARTH_RETURN_IF_ERROR(servers.add({.name = "default",
                                        .base_url = options.model_url,
                                        .model = options.model,
                                        .key_ref = options.model_key_ref,
                                        .stream = options.model_stream,
                                        .tools = *tools}));
  } else if (!options.model_key_ref.empty()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "--model-key is the key of --model-url's server: give --model-url too");
  }
  for (const auto& spec : options.model_servers) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error::make(ErrorCode::kInvalidParams,
                         "--model-server is NAME=URL, not '" + spec + "'");
    }
    HEARTH_RETURN_IF_ERROR(servers.add({.name = spec.substr(0, eq),
                                        .base_url = spec.substr(eq + 1),
                                        .model = options.model,
                                        .key_ref = {},  // bound by --model-server-key
                                        .stream = options.model_stream,
                                        .tools = *tools}));
  }
  for (const auto& spec : options.model_server_keys) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error::make(ErrorCode::kInvalidParams,
                         "--model-server-key is NAME=SCOPE::NAME, not '" + spec + "'");
    }
    HEARTH_RETURN_IF_ERROR(servers.set_key(spec.substr(0, eq), spec.substr(eq + 1)));
  }
  return {};
}

/// Reads a model key from the vault under the vault's rule for A2S: a domain's variable goes to
/// that domain only, a global one where a trust grant sends it. A configured server's own key
/// (domain empty) was bound to it by the operator. Every read is audited (never the value).
Result<std::string> read_model_key(vault::Vault& vault, host::AuditLog& audit,
                                   const std::string& ref, const std::string& domain) {
  auto variable = methods::vault::split_variable(ref);
  if (!variable) {
    return Error::make(ErrorCode::kInvalidParams,
                       "a key reference is SCOPE::NAME (a vault variable), not '" + ref + "'");
  }
  Result<std::optional<vault::Secret>> secret = std::optional<vault::Secret>();
  if (!domain.empty() && variable->first == vault::kGlobal) {
    secret = vault.get_global_for(domain, variable->second);
  } else if (domain.empty() || ascii::iequals(variable->first, domain)) {
    secret = vault.get(variable->first, variable->second);
  } else {
    secret = Error::make(
        ErrorCode::kPermissionDenied,
        "the vault keeps " + ref + " for " + variable->first + ": it is not sent to " + domain +
            " (a model key goes to the server it belongs to; configure the server on the "
            "daemon with its key, --model-server-key)",
        json::object{{"reason", "key-scope"}, {"variable", ref}, {"domain", domain}});
  }
  host::AuditRecord record;
  record.service = variable->first;
  record.endpoint = ref;
  record.method = "agent/modelKey";
  record.transport = "daemon";
  record.client = domain;
  record.outcome = !secret.ok() ? "error" : secret.value() ? "ok" : "absent";
  audit.record(record);
  if (!secret.ok()) return secret.error();
  if (!secret.value()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "the vault has no " + ref + ": set it with hearth vault set");
  }
  return secret.value()->value;
}

}  // namespace

Agents::Agents(daemon::Context& context) : workspaces_(context.find<Workspaces>().manager()) {
  if (auto st = configure_model_servers(context.options(), settings_.servers); !st.ok()) {
    throw daemon::StartupError(st.error().message, 2);
  }
  settings_.read_key = [vault = context.find<Registry>().vault(),
                        &audit = context.find<Audit>().log()](const std::string& ref,
                                                              const std::string& domain) {
    return read_model_key(*vault, audit, ref, domain);
  };
  settings_.context.max_chars = context.options().model_context_chars;
  settings_.transcripts = context.state_dir() / "agent";
  settings_.writer = &transcript_writer_;
}

Status Agents::expose(daemon::Surface& surface) {
  methods::agent::add_methods(surface.rpc(), workspaces_, settings_, runs_);
  return {};
}

void Agents::stop() {
  runs_.cancel_all();
}

}  // namespace hearth::subsystems
