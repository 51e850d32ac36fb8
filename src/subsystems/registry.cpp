#include "subsystems/registry.hpp"

#include <spdlog/spdlog.h>

#include "daemon/state_dir.hpp"
#include "methods/registry/registry.hpp"
#include "methods/vault/vault.hpp"
#include "subsystems/audit.hpp"
#include "subsystems/storage.hpp"

namespace hearth::subsystems {
namespace fs = std::filesystem;

Result<std::shared_ptr<vault::Vault>> open_vault(const fs::path& state_dir,
                                                 std::shared_ptr<storage::Engine> engine) {
  std::string error;
  if (!daemon::ensure_private_dir(state_dir, error)) {
    return Error::make(ErrorCode::kInternalError, "state dir: " + error);
  }
  HEARTH_ASSIGN_OR_RETURN(auto key, vault::MasterKey::open(state_dir / "vault.key"));
  HEARTH_ASSIGN_OR_RETURN(
      auto opened, vault::Vault::open(state_dir / "vault.db", std::move(key), std::move(engine)));
  return std::shared_ptr<vault::Vault>(std::move(opened));
}

std::shared_ptr<vault::Vault> open_vault_on_first_use(const fs::path& state_dir,
                                                      std::shared_ptr<storage::Engine> engine) {
  return vault::Vault::open_on_first_use(
      state_dir / "vault.db",
      [key_file = state_dir / "vault.key"] { return vault::MasterKey::open(key_file); },
      std::move(engine));
}

Registry::Registry(daemon::Context& context) : watch_(!context.options().registry_dirs.empty()) {
  const auto& options = context.options();
  // The vault's key is read (made when there is none) and checked now, so a key file of the
  // wrong mode or form, or a malformed $HEARTH_VAULT_KEY, stops the start; the vault itself is
  // opened at its first use (a key that does not match it is reported to the call that needs a
  // variable).
  if (auto key = vault::MasterKey::open(context.state_dir() / "vault.key"); !key.ok()) {
    throw daemon::StartupError(key.error().message);
  }
  vault_ = open_vault_on_first_use(context.state_dir(), context.find<Storage>().engine());
  client_ = std::make_shared<httpclient::Client>(context.io().get_executor());
  a2s::GatewayOptions gateway_options;
  gateway_options.registry_dirs = options.registry_dirs;
  gateway_options.local_domains = options.local_domains;
  gateway_options.timeout = std::chrono::milliseconds(options.registry_timeout_ms);
  // Definitions added through the daemon (registry/define), shared by every daemon of a
  // PostgreSQL database.
  const auto& engine = context.find<Storage>().engine();
  auto stored = a2s::DefinitionStore::open(*engine, context.state_dir() / "registry.db");
  if (!stored.ok()) throw daemon::StartupError("registry: " + stored.error().message);
  gateway_options.stored = std::move(stored).value();
  gateway_options.engine = engine;
  gateway_ =
      std::make_shared<a2s::Gateway>(context.io().get_executor(), gateway_options, vault_, client_);
  gateway_->load();
  const auto snap = gateway_->snapshot();
  for (const auto& failure : snap->failures) {
    for (const auto& problem : failure.problems) {
      spdlog::error("registry: {}: {}", failure.file.string(), problem.to_string());
    }
  }
  if (watch_) {
    spdlog::info("registry: {} services, {} files refused", snap->definitions.size(),
                 snap->failures.size());
  }

  // Every exchange with a service and every read of a global variable is audited.
  auto& audit = context.find<Audit>().log();
  gateway_->set_audit([&audit](const a2s::AuditEntry& entry) {
    host::AuditRecord record;
    record.service = entry.service;
    record.endpoint = entry.capability;
    record.method = entry.action;
    record.transport = "daemon";
    record.outcome = entry.outcome;
    record.detail = entry.detail;
    audit.record(record);
  });
  vault_->set_read_observer([&audit](const vault::GlobalRead& read) {
    host::AuditRecord record;
    record.service = read.domain;
    record.endpoint = "global::" + read.name;
    record.method = "vault/read";
    record.transport = "daemon";
    record.outcome = read.granted ? "ok" : "refused";
    audit.record(record);
  });
}

Status Registry::expose(daemon::Surface& surface) {
  methods::registry::add_methods(surface.rpc(), *gateway_);
  methods::vault::add_methods(surface.rpc(), *gateway_);
  return {};
}

void Registry::start() {
  if (watch_) gateway_->start_watching(std::chrono::milliseconds(1000));
}

void Registry::describe(boost::json::object& ready) const {
  const auto snap = gateway_->snapshot();
  ready["registry"] = boost::json::object{{"services", snap->definitions.size()},
                                          {"refused", snap->failures.size()}};
}

void Registry::stop() {
  gateway_->stop();
  client_->shutdown();
}

}  // namespace hearth::subsystems
