#pragma once
/// Virtual workspaces (docs/workspace.md): the manager of the served workspaces (`--workspace`
/// folders opened before the daemon says it is ready), their side effects and sources reached
/// through the services, and `workspace/*`.

#include <atomic>
#include <memory>

#include "common/blocking.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "methods/workspace/workspace.hpp"
#include "workspace/manager.hpp"

namespace hearth::subsystems {

class Workspaces : public daemon::Component {
 public:
  static constexpr std::string_view kName = "workspaces";
  static std::vector<std::string_view> dependencies() { return {"storage", "services", "jail"}; }
  explicit Workspaces(daemon::Context& context);
  ~Workspaces() override;

  workspace::Manager& manager() { return *manager_; }

  Status expose(daemon::Surface& surface) override;
  /// Opens the --workspace folders: one with a problem stops the daemon, as a service with one
  /// does (nothing is half served).
  void start() override;
  bool ready() override { return opened_.load(); }
  void describe(boost::json::object& ready) const override;
  void stop() override;

 private:
  daemon::Context& context_;
  /// Where the store's calls wait: a database server answers several commits at once (and
  /// flushes them together), so a shared engine gets more threads than the one SQLite file,
  /// which takes one writer at a time.
  std::unique_ptr<BlockingExecutor> store_calls_;
  std::unique_ptr<methods::workspace::HostServices> services_;
  std::unique_ptr<workspace::Manager> manager_;
  std::atomic<bool> opened_{false};
  boost::json::array names_;  ///< written before opened_ is set, read after
};

}  // namespace hearth::subsystems
