#include "subsystems/apps.hpp"

#include <spdlog/spdlog.h>

#include "methods/app/backend.hpp"
#include "methods/capability/capability.hpp"
#include "subsystems/registry.hpp"
#include "subsystems/sandbox.hpp"
#include "subsystems/storage.hpp"

namespace hearth::subsystems {

agentapp::ReadinessContext app_readiness(const std::filesystem::path& state_dir,
                                         std::shared_ptr<storage::Engine> engine) {
  // An app's secrets are the vault's values under the scope app.<name>; the vault is opened
  // when a readiness check first asks.
  auto vault = open_vault_on_first_use(state_dir, std::move(engine));
  return agentapp::host_readiness([vault](std::string_view app, std::string_view key) {
    auto secret = vault->get("app." + std::string(app), key);
    return secret.ok() && secret.value().has_value();
  });
}

Apps::Apps(daemon::Context& context) {
  auto store = agentapp::AppStore::open(context.state_dir(), context.find<Storage>().engine());
  if (!store.ok()) {
    reason_ = store.error().message;
    spdlog::error("agent apps are not served: {}", reason_);
    return;
  }
  store_ = std::move(store).value();
  store_->set_readiness_context(
      app_readiness(context.state_dir(), context.find<Storage>().engine()));
  bridge_ = std::make_unique<agentapp::Bridge>(*store_);
  // The enabled apps' backends, under the jail (none with --insecure-no-sandbox: an app's code
  // is never run unconfined).
  agentapp::BackendOptions backend_options;
  const auto& jail = context.find<Sandbox>().jail();
  if (!jail->insecure()) backend_options.jail = jail;
  backends_ = agentapp::Backends::create(context.io().get_executor(), *store_, *bridge_, calls_,
                                         std::move(backend_options));
}

Apps::~Apps() = default;

Status Apps::expose(daemon::Surface& surface) {
  if (!available()) {
    methods::capability::add_unavailable(surface.rpc(), reason_);
    methods::app::add_backend_unavailable(surface.rpc(), reason_);
    return {};
  }
  methods::capability::add_methods(surface.rpc(), *bridge_, calls_);
  methods::app::add_backend_methods(surface.rpc(), *backends_);
  return {};
}

void Apps::start() {
  if (backends_) backends_->start();
}

void Apps::stop() {
  if (backends_) backends_->stop(false);
}

}  // namespace hearth::subsystems
