#pragma once
/// The LAVS services (`hearth serve PATH...`): the host that loads and calls them, `lavs/*`, the
/// LAFS operation names, and `--watch` (reloading what changed and telling the clients).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/blocking.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "host/host.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"

namespace hearth::subsystems {

/// Prints load failures and warnings to stderr ("FILE: PATH: MESSAGE" lines).
void print_load_report(const host::LoadReport& report);

/// --watch: every `interval`, reloads what changed under `paths` (on a blocking thread), logs what
/// it did, and gives `on_change` every report that changed a service. Ends when `timer` is
/// cancelled.
boost::asio::awaitable<void> watch_services(
    host::Host& host, std::vector<std::filesystem::path> paths, std::chrono::milliseconds interval,
    boost::asio::steady_timer& timer, std::function<void(const host::ReloadReport&)> on_change);

/// The names of the services a reload added, changed or removed.
std::vector<std::string> changed_services(const host::ReloadReport& report);

class Services : public daemon::Component {
 public:
  static constexpr std::string_view kName = "services";
  static std::vector<std::string_view> dependencies() {
    return {"storage", "jail", "audit", "registry"};
  }
  explicit Services(daemon::Context& context);
  ~Services() override;

  host::Host& host() { return *host_; }
  /// Called after every reload that changed a service (--watch), on an I/O thread; WebSocket
  /// clients of /ws get lavs/servicesChanged without it.
  void on_reload(std::function<void(const host::ReloadReport&)> listener);

  Status expose(daemon::Surface& surface) override;
  void start() override;
  /// Once the warm JS workers can answer, so that a first call does not wait for one to start;
  /// a pool that cannot start does not hold the daemon past 20 s.
  bool ready() override;
  void describe(boost::json::object& ready) const override;
  void stop() override;

 private:
  /// Items handlers publish, carried to and from the daemons sharing the database (a shared
  /// storage engine): sent in order on a thread of their own, never on an I/O thread.
  void relay_out(const std::string& service, std::string_view endpoint, const json::value& data);
  void relay_in(const storage::Notice& notice);

  daemon::Context& context_;
  std::shared_ptr<storage::Engine> engine_;
  std::unique_ptr<storage::Database> relay_db_;  ///< items too large for a notice
  std::unique_ptr<BlockingExecutor> relay_thread_;
  std::uint64_t relay_notices_ = 0;
  std::unique_ptr<host::Host> host_;
  std::vector<std::function<void(const host::ReloadReport&)>> reload_listeners_;
  boost::asio::steady_timer watch_timer_;
  std::chrono::steady_clock::time_point ready_by_;
  bool warned_ = false;
};

}  // namespace hearth::subsystems
