#pragma once
/// Warm jails: for a script endpoint's per-call processes, the jail of the next call built ahead of
/// it (namespaces, id maps, cgroups, mounts, the private /tmp and the Landlock ruleset), so that a
/// call costs the exec message, a fork and an exec inside a jail that is already there.
///
/// Each warm jail serves exactly one call and is then gone, like the jail made at the call:
/// nothing of one call (files in /tmp, processes, environment) reaches another. The launcher of a
/// warm jail (--exec-on-request) waits on its control socket for the call's argv and environment
/// (jail/control.hpp, "exec"); what it was started with does not depend on any input. A warm
/// jail takes a call only if the jail planned at that moment would be the same, against the same
/// files (Confinement::plan_fingerprint): a file a negated pattern hides, replaced on the host
/// since, would have lost its cover (the kernel detaches a mount whose mountpoint is renamed over
/// in another namespace).
///
/// Jails are made only for endpoints that were called: after a call takes one (or finds none), the
/// next is started in the background, on the endpoint's executor. How many wait adapts: a call
/// that finds none raises the number (up to kMaxWarm), a jail that waited kIdle unused is dropped
/// and lowers it; an endpoint left alone ends with none. Dropping a jail closes its control
/// socket, and its launcher exits by itself, removing its cgroups.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "confine/confine.hpp"
#include "proc/process.hpp"

namespace hearth::handlers::script {

/// One jail built ahead of its call, its launcher waiting.
struct WarmJail {
  std::unique_ptr<proc::Started> child;
  std::shared_ptr<confine::Confinement> jail;
  std::filesystem::path program;  ///< what it will run (a call for another program cannot use it)
  std::chrono::steady_clock::time_point made;
};

class WarmJails : public std::enable_shared_from_this<WarmJails> {
 public:
  static constexpr std::size_t kMaxWarm = 4;
  static constexpr std::chrono::seconds kIdle{30};

  /// `make` builds one warm jail (called on `executor`); `idle`: how long one may wait unused.
  using Make = std::function<Result<WarmJail>()>;
  WarmJails(const boost::asio::any_io_executor& executor, Make make, std::string label,
            std::chrono::milliseconds idle = kIdle);
  ~WarmJails();
  WarmJails(const WarmJails&) = delete;
  WarmJails& operator=(const WarmJails&) = delete;

  /// A jail ready for a call, if one waits; either way the next ones are made in the background.
  /// Any thread.
  std::optional<WarmJail> take();

  /// Drops the waiting jails; none is made afterwards. Any thread; idempotent.
  void stop();

  /// Jails waiting now (for tests).
  std::size_t waiting() const;

  /// Ends a jail that will not be used: its launcher is told to exit and reaped in the background.
  static void drop(WarmJail jail, const boost::asio::any_io_executor& executor);

 private:
  void refill();  ///< on strand_
  void arm();     ///< on strand_: the idle timer, while jails wait

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  boost::asio::steady_timer idle_;
  Make make_;
  std::string label_;
  std::chrono::milliseconds idle_time_;
  mutable std::mutex mutex_;  ///< guards what follows
  std::deque<WarmJail> ready_;
  std::size_t target_ = 0;  ///< how many should wait; a call that finds none raises it
  bool armed_ = false;
  bool stopped_ = false;
};

}  // namespace hearth::handlers::script
