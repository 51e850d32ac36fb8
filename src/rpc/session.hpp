#pragma once
/// A client connection as the JSON-RPC layer sees it: which transport, and (for WebSocket) a way
/// to push server-initiated notifications.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hearth::rpc {

class Session {
 public:
  /// Writes one complete JSON-RPC message to the client. Must be thread-safe and non-blocking
  /// (queue and return). Empty for transports that cannot push (HTTP, in-process).
  using PushFn = std::function<void(std::string message)>;

  Session(std::string transport, PushFn push);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::uint64_t id() const { return id_; }
  /// "http", "ws" or "inproc".
  const std::string& transport() const { return transport_; }
  bool can_push() const { return static_cast<bool>(push_); }
  /// What the client calls itself (its `X-Hearth-Client` header: `hearth call` sends
  /// "hearth-cli"), empty when it said nothing. Set by the transport before each request it
  /// dispatches (HTTP: per request; WebSocket: the upgrade's), never while one runs.
  const std::string& client() const { return client_; }
  void set_client(std::string client) { client_ = std::move(client); }
  /// Sends when the session is open and can push; otherwise drops the message.
  void push(std::string message) const;

  /// Runs `hook` when the session closes (at once if it already has). Used to drop subscriptions.
  void on_close(std::function<void()> hook);
  /// Called by the transport when the connection ends. Runs the hooks once; later pushes are
  /// dropped.
  void close();
  bool closed() const { return closed_.load(); }

 private:
  std::uint64_t id_;
  std::string transport_;
  std::string client_;
  PushFn push_;
  std::atomic<bool> closed_{false};
  mutable std::mutex mu_;
  std::vector<std::function<void()>> hooks_;
};

}  // namespace hearth::rpc
