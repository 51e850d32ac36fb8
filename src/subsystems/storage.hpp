#pragma once
/// Where the daemon's state is kept (docs/deployment.md): the storage engine every component
/// that stores something opens its database from. SQLite files under the state dir by default;
/// one PostgreSQL database shared by several daemons with `--database postgresql://...` (or
/// $HEARTH_DATABASE, or `database` under [serve] in the config file).

#include <memory>

#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "storage/engine.hpp"

namespace hearth::subsystems {

/// Opens the engine `url` names for the state dir `state_dir` (empty: SQLite). On PostgreSQL
/// the vault's master key of the state dir (or $HEARTH_VAULT_KEY) gives the apps' role
/// passwords, so every daemon of one database needs the same key. The CLI's commands that
/// work on the state (vault, app) use it too.
Result<std::shared_ptr<storage::Engine>> open_storage(std::string_view url,
                                                      const std::filesystem::path& state_dir);

class Storage : public daemon::Component {
 public:
  static constexpr std::string_view kName = "storage";
  static std::vector<std::string_view> dependencies() { return {}; }
  explicit Storage(daemon::Context& context);

  const std::shared_ptr<storage::Engine>& engine() const { return engine_; }
  void describe(boost::json::object& ready) const override;

 private:
  std::shared_ptr<storage::Engine> engine_;
};

}  // namespace hearth::subsystems
