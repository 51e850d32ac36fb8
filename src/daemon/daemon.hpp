#pragma once
/// The daemon: its components in dependency order, the server they are exposed on, the token,
/// daemon.json and the ready file, signals, and the ordered shutdown (component.hpp).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/component.hpp"
#include "daemon/options.hpp"

namespace hearth::daemon {

class Daemon;

/// Stops `ioc` once no child process runs any more, or at `deadline`, whichever comes first
/// (looking every 20 ms with `timer`): the end of a graceful shutdown.
void stop_when_children_gone(boost::asio::io_context& ioc, boost::asio::steady_timer& timer,
                             std::chrono::steady_clock::time_point deadline);

/// What a component's constructor is given.
class Context {
 public:
  const Options& options() const;
  /// The state folder (created, mode 0700, before any component is built).
  const std::filesystem::path& state_dir() const;
  boost::asio::io_context& io();

  /// A component this one declared in its `dependencies()`, built before it. Finding one that
  /// was not declared is a start-up error: the declared graph is the order the daemon keeps.
  template <class T>
  T& find() {
    return static_cast<T&>(find_component(T::kName));
  }

  /// The daemon's base URL (http://127.0.0.1:PORT); empty until it listens (from start() on).
  std::string url() const;
  /// Sends a JSON-RPC notification to every WebSocket client of /ws (from start() on).
  void broadcast(const std::string& message);
  /// Stops the daemon with `exit_code` (from any thread): a component that fails after the
  /// start, such as a workspace folder that cannot be opened before the daemon is ready.
  void fail(int exit_code);

 private:
  friend class Daemon;
  explicit Context(Daemon& daemon) : daemon_(daemon) {}
  Component& find_component(std::string_view name);
  Daemon& daemon_;
};

class Daemon {
 public:
  explicit Daemon(Options options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Adds a component (component.hpp); the order of the calls does not matter beyond breaking
  /// ties: components start in dependency order.
  template <class T>
  void add() {
    add_factory(std::string(T::kName), T::dependencies(),
                [](Context& context) -> std::unique_ptr<Component> {
                  return std::make_unique<T>(context);
                });
  }

  /// What the daemon tells when it is ready: the ready document and the token (the banner of
  /// `hearth serve`, the browser of --open). Runs on an I/O thread; must not block.
  void on_ready(std::function<void(const boost::json::object& ready, const std::string& token)> fn);

  /// Builds, serves until SIGINT or SIGTERM (or a component's fail()), stops; the exit code.
  int run();

  /// The components in the order they start (dependency order, ties in the order added), or
  /// the reason there is none (a cycle, a dependency nobody added). For tests and diagnostics.
  Result<std::vector<std::string>> start_order() const;

  struct State;

 private:
  friend class Context;
  void add_factory(std::string name, std::vector<std::string_view> dependencies,
                   std::function<std::unique_ptr<Component>(Context&)> make);
  std::unique_ptr<State> state_;
};

}  // namespace hearth::daemon
