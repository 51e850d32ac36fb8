#include "subsystems/storage.hpp"

#include <spdlog/spdlog.h>

#include "daemon/state_dir.hpp"
#include "vault/master_key.hpp"

namespace hearth::subsystems {

Result<std::shared_ptr<storage::Engine>> open_storage(std::string_view url,
                                                      const std::filesystem::path& state_dir) {
  storage::EngineOptions options;
  if (!url.empty()) {
    std::string error;
    if (!daemon::ensure_private_dir(state_dir, error)) {
      return Error::make(ErrorCode::kInternalError, "state dir: " + error);
    }
    HEARTH_ASSIGN_OR_RETURN(auto key, vault::MasterKey::open(state_dir / "vault.key"));
    options.app_role_secret = key.derive("hearth postgresql app role v1");
  }
  HEARTH_ASSIGN_OR_RETURN(auto engine, storage::open_engine(url, std::move(options)));
  return std::shared_ptr<storage::Engine>(std::move(engine));
}

Storage::Storage(daemon::Context& context) {
  auto engine = open_storage(context.options().database, context.state_dir());
  if (!engine.ok()) throw daemon::StartupError("storage: " + engine.error().message);
  engine_ = std::move(engine).value();
  if (engine_->shared()) spdlog::info("storage: {}", engine_->describe());
}

void Storage::describe(boost::json::object& ready) const {
  ready["storage"] = boost::json::object{{"engine", engine_->kind()},
                                         {"shared", engine_->shared()},
                                         {"location", engine_->describe()}};
}

}  // namespace hearth::subsystems
