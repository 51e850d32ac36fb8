#pragma once
/// A subsystem of the daemon as a component (docs/architecture.md, "Components and their
/// lifecycle"): what handler kinds are to the host, components are to `hearth serve`. A
/// component is a class with
///
///   static constexpr std::string_view kName = "workspaces";
///   static std::vector<std::string_view> dependencies() { return {"host", "jail"}; }
///   explicit Workspaces(daemon::Context& context);
///
/// added to the daemon with `Daemon::add<Workspaces>()`. The daemon constructs the components in
/// dependency order (a component's constructor reads its configuration from
/// `Context::options()` and finds the components it declared with `Context::find<T>()`), lets
/// each expose its methods and routes, listens, starts them in the same order, waits until each
/// is ready, and stops them in reverse order. A constructor that cannot go on throws
/// `StartupError` (start-up is the one place hearth throws): the daemon stops what it built and
/// exits with the error's code.

#include <boost/json/object.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace hearth::net {
class Routes;
}
namespace hearth::rpc {
class Dispatcher;
}

namespace hearth::daemon {

/// Where a component's JSON-RPC methods and HTTP paths go.
class Surface {
 public:
  virtual ~Surface() = default;
  /// The daemon's JSON-RPC methods, at `/rpc` and `/ws`.
  virtual rpc::Dispatcher& rpc() = 0;
  /// Every HTTP path other than /rpc and /ws.
  virtual net::Routes& routes() = 0;
  /// A JSON-RPC endpoint of its own (the App Server's `/app-server` and `/app-server/ws`), with
  /// the same token and checks as /rpc; the dispatcher lives as long as the daemon.
  virtual rpc::Dispatcher& endpoint(std::string http_path, std::string ws_path) = 0;
};

class Component {
 public:
  Component() = default;
  virtual ~Component() = default;
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  /// Registers its methods and routes; an error stops the start (logged with its name).
  virtual Status expose(Surface& /*surface*/) { return {}; }
  /// The daemon listens (Context::url() is known): background work begins here (watchers,
  /// supervised processes, folders opened before the daemon says it is ready).
  virtual void start() {}
  /// Asked every few milliseconds, once started, until every component says yes: only then does
  /// the daemon write daemon.json and the ready file and print its banner.
  virtual bool ready() { return true; }
  /// Adds what it serves to the ready document (daemon.json, `--ready-file`, `--json`).
  virtual void describe(boost::json::object& /*ready*/) const {}
  /// Shutting down, in reverse start order, after the server stopped accepting: cancel, close,
  /// stop children. Must not block long; the daemon then waits (bounded) for children to end.
  virtual void stop() {}
};

/// Thrown by a component's constructor when the daemon cannot start: logged, then the
/// components built before it are stopped and destroyed, and `hearth serve` exits with `code`.
class StartupError : public std::runtime_error {
 public:
  explicit StartupError(const std::string& message, int code = 1)
      : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

}  // namespace hearth::daemon
