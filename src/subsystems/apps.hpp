#pragma once
/// Agent Apps (docs/agent-apps.md): the apps installed in the state folder, their capability
/// bridge (`capability/*`) and the supervisor of their backends (`app/backend/*`). A store that
/// cannot be opened leaves the rest of the daemon served; the apps' methods then answer with
/// the reason.

#include <filesystem>
#include <memory>
#include <string>

#include "agentapp/backend/backends.hpp"
#include "agentapp/bridge/bridge.hpp"
#include "agentapp/store/store.hpp"
#include "common/blocking.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "storage/engine.hpp"

namespace hearth::subsystems {

/// The readiness context of the Agent Apps of `state_dir`: the bridge's capabilities, secrets
/// from the vault (scope app.<name>).
/// `engine`: where the vault's tables are (null: SQLite).
agentapp::ReadinessContext app_readiness(const std::filesystem::path& state_dir,
                                         std::shared_ptr<storage::Engine> engine = nullptr);

class Apps : public daemon::Component {
 public:
  static constexpr std::string_view kName = "apps";
  static std::vector<std::string_view> dependencies() { return {"storage", "jail"}; }
  explicit Apps(daemon::Context& context);
  ~Apps() override;

  /// False when the store could not be opened (why: unavailable_reason()); the accessors below
  /// are then not to be used.
  bool available() const { return store_ != nullptr; }
  const std::string& unavailable_reason() const { return reason_; }
  agentapp::AppStore& store() { return *store_; }
  agentapp::Bridge& bridge() { return *bridge_; }
  const std::shared_ptr<agentapp::Backends>& backends() const { return backends_; }
  /// Where the app databases are opened and queried, off the I/O threads; bridge calls run in
  /// their app's lane (BlockingExecutor::run_in), so up to kCallThreads apps query at once and
  /// none waits behind another's queue.
  BlockingExecutor& calls() { return calls_; }
  static constexpr std::size_t kCallThreads = 8;

  Status expose(daemon::Surface& surface) override;
  void start() override;
  void stop() override;

 private:
  std::string reason_;
  BlockingExecutor calls_{kCallThreads};
  std::unique_ptr<agentapp::AppStore> store_;
  std::unique_ptr<agentapp::Bridge> bridge_;
  std::shared_ptr<agentapp::Backends> backends_;
};

}  // namespace hearth::subsystems
