#pragma once
/// The daemon's network front: JSON-RPC 2.0 over HTTP (`POST /rpc`) and WebSocket (`GET /ws`),
/// and the routes of a Routes table (routes.hpp) for everything else served over HTTP, with the
/// local-security wire rules (Host and Origin checks, per-launch bearer token) applied to every
/// request and to the WebSocket upgrade. Beast stays inside server.cpp.

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "net/routes.hpp"

namespace hearth::rpc {
class Dispatcher;
}

namespace hearth::net {

/// Everything the server needs to know at start-up.
struct ServerOptions {
  /// Bind address (an IPv4 or IPv6 literal, or "localhost").
  std::string address = "127.0.0.1";
  /// 0 picks a free port; Server::port() tells which.
  std::uint16_t port = 0;
  /// The bearer token every request must carry. An empty token is refused by listen().
  std::string token;
  /// Extra allowed Origin values, compared exactly (e.g. "http://localhost:3000"). Same-origin
  /// (http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT) is always allowed.
  std::vector<std::string> allowed_origins;
  /// Limit of an HTTP body and of a WebSocket message.
  std::size_t max_request_bytes = 1 << 20;
  /// HTTP keep-alive idle limit; WebSocket idle limit (live peers are kept by pings).
  std::chrono::seconds idle_timeout{60};
  /// Open connections at most, HTTP and WebSocket together. At the cap a new connection first
  /// pushes out the oldest one that has not yet shown the token; when there is none, it is
  /// closed as soon as it is accepted. `hearth serve` raises the file limit and sizes this from it.
  std::size_t max_connections = 1024;
  /// WebSocket connections at most; an upgrade beyond this gets 503. Zero means
  /// max_connections less an eighth (at least 8) kept for HTTP calls, so that subscribers filling
  /// their share never lock out plain requests.
  std::size_t max_websockets = 0;
  /// Connections that have not yet sent a request with the token, at most (0: a quarter of
  /// max_connections, at least 64). Beyond this, and at max_connections, the oldest idle one of
  /// them (nothing of a request waiting on its socket, none being handled) is closed to make
  /// room, whatever its age; a new connection is refused only when none is idle. A flood of
  /// idle connections therefore cannot keep a client with the token out, and a client whose
  /// request has arrived is never the one closed.
  std::size_t max_unauthenticated = 0;
  /// A connection must have sent a request with the token within this time of being accepted
  /// (its headers read in full), or it is closed; authenticated connections get idle_timeout.
  std::chrono::milliseconds header_timeout{10000};
  /// The threads that run the io_context. With more than one, a fan-out (common/fan_out.hpp)
  /// hands every other receiver's message to the pool, so that two threads write at once.
  std::size_t io_threads = 1;
  /// A WebSocket peer that lets more than this many bytes queue up unread is disconnected.
  std::size_t max_ws_queue_bytes = 16 << 20;
  /// Receives one line per transport-level event (rejections, disconnects, errors). Called from
  /// I/O threads concurrently, so it must be thread-safe. When empty, lines go to spdlog at debug.
  std::function<void(std::string_view line)> log;
  /// More JSON-RPC services beside the main one (/rpc and /ws), each on a path for HTTP POST
  /// and one for its WebSocket, with the same token and checks (the App Server's /app-server and
  /// /app-server/ws). Their dispatchers must outlive every connection, as the main one.
  struct RpcService {
    std::string http_path;
    std::string ws_path;
    const rpc::Dispatcher* dispatcher = nullptr;
  };
  std::vector<RpcService> rpc_services;
};

/// Serves a Dispatcher on one TCP port. Runs on every thread that calls ioc.run(); each
/// connection's work stays on that connection's strand.
class Server {
 public:
  /// `dispatcher` must outlive every connection (i.e. until ioc.run() has returned after stop()).
  /// `routes` answer the paths other than /rpc and /ws (none: 404 for those, after the token).
  Server(boost::asio::io_context& ioc, ServerOptions options, const rpc::Dispatcher& dispatcher,
         Routes routes = {});
  /// Calls stop().
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and listens. Returns the bound port, or an error (bad address, address in use, empty
  /// token, called twice).
  Result<std::uint16_t> listen();
  /// Starts accepting connections. Requires a successful listen().
  void start();
  /// Stops accepting and closes every connection (WebSocket with close code 1001). Requests in
  /// flight are abandoned: their handlers run to completion but answers are dropped. Thread-safe
  /// and idempotent. Once those handlers drain, the server holds no more work on the io_context.
  void stop();
  /// The bound port (0 before listen()).
  std::uint16_t port() const;
  /// Open connections right now (HTTP and WebSocket).
  std::size_t connection_count() const;
  /// Sends `message` (one complete JSON-RPC notification) to every open WebSocket connection.
  /// Thread-safe; queued behind what each connection is already sending.
  void broadcast(const std::string& message);

  /// Implementation (server.cpp); named here only so that its connection code can refer to it.
  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace hearth::net
