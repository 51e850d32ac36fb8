#pragma once
/// Listener: one listening TCP socket, its accept loop and the registry of the connections it
/// accepted. The registry caps their number and stop() closes them all. The daemon's server
/// (net::Server) and the egress proxy (egress::Proxy) are both built on it; what a connection
/// does once accepted is theirs.
///
/// Threads: the accept loop runs on a strand of its own; every accepted socket gets a new strand
/// (its executor), so that a connection's work stays on its strand however many threads run the
/// io_context. add(), remove(), connection_count() and stop() may be called from any thread.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/fd.hpp"
#include "common/result.hpp"

namespace hearth::listener {

/// What the listener needs of a connection it tracks.
class Connection {
 public:
  virtual ~Connection() = default;
  /// Closes the connection soon, on its own strand. Called from any thread by stop().
  virtual void request_stop() = 0;
};

/// The limit a new connection met.
enum class Limit {
  kConnections,  ///< max_connections connections are open
  kOwner,        ///< the owner's own limit (Handlers::owner_limit)
};

struct Options {
  /// Connections registered at once, at most. At the cap a new connection is refused unless
  /// Handlers::make_room closes an older one.
  std::size_t max_connections = 1024;
  /// Accept-loop events (accept failures, the loop's end). Any thread. May be empty.
  std::function<void(std::string_view line)> log;
};

/// What the owner does with accepted sockets. All are called on the accept strand, one at a
/// time; only `serve` is required.
struct Handlers {
  /// Takes an admitted socket (already on a strand of its own). The owner registers its
  /// connection with add(), which refuses it once stop() has begun.
  std::function<void(boost::asio::ip::tcp::socket socket)> serve;
  /// A limit of the owner's, checked after max_connections: true when a new connection must
  /// make room (or be refused) although the cap is not reached.
  std::function<bool()> owner_limit;
  /// At a limit: closes an older connection to make room; true when it did, and the new
  /// connection is then served (the count may exceed the cap until the old one has closed).
  std::function<bool(Limit limit)> make_room;
  /// At a limit with no room made: last words to the refused socket (e.g. a 503), which the
  /// listener then closes.
  std::function<void(boost::asio::ip::tcp::socket& socket, Limit limit)> refuse;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  /// Accepts on a strand of `executor`; each connection gets a new strand of it.
  static std::shared_ptr<Listener> make(boost::asio::any_io_executor executor, Options options);

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// Opens, binds (SO_REUSEADDR) and listens on `endpoint` (port 0: a free one). Returns the bound
  /// port. Errors (kInternalError) name the endpoint as `name` (default: the endpoint itself).
  Result<std::uint16_t> bind(const boost::asio::ip::tcp::endpoint& endpoint,
                             std::string_view name = {});
  /// Takes a socket that is already listening (IPv4 or IPv6 TCP, possibly bound in another
  /// network namespace) and makes it close-on-exec. Errors (kInvalidParams): anything else, which
  /// is then closed.
  Status adopt(Fd fd);

  /// Starts the accept loop. Requires a successful bind() or adopt(); once only. The loop holds
  /// the handlers (and what they hold) until it ends, after stop().
  void start(Handlers handlers);
  /// Closes the listening socket and asks every registered connection to close
  /// (Connection::request_stop); add() refuses from now on. Idempotent, thread-safe.
  void stop();
  bool stopped() const { return stopped_; }

  /// Registers a connection so that it counts against max_connections and stop() closes it.
  /// Returns its id (increasing: a smaller id is an older connection), or 0 when stop() has
  /// begun (the caller then closes the socket itself).
  std::uint64_t add(const std::shared_ptr<Connection>& connection);
  /// The connection has ended: it no longer counts. Idempotent.
  void remove(std::uint64_t id);
  /// Registered connections right now.
  std::size_t connection_count() const;
  /// The registered connections still alive right now (a snapshot; e.g. to reach them all).
  std::vector<std::shared_ptr<Connection>> live() const;

 private:
  Listener(boost::asio::any_io_executor executor, Options options);
  /// A new strand for an accepted connection.
  boost::asio::any_io_executor connection_strand() const;
  static boost::asio::awaitable<void> accept_loop(std::shared_ptr<Listener> self,
                                                  Handlers handlers);
  /// Applies the limits to one accepted socket and hands it to `serve` or refuses it.
  void admit(boost::asio::ip::tcp::socket socket, const Handlers& handlers);
  void log(std::string_view line) const {
    if (options_.log) options_.log(line);
  }

  const boost::asio::any_io_executor executor_;
  const Options options_;
  boost::asio::ip::tcp::acceptor acceptor_;  // on its strand once started
  bool open_ = false;                        // bound or adopted
  bool started_ = false;

  std::atomic<bool> stopped_{false};
  mutable std::mutex mu_;
  std::uint64_t next_id_ = 1;                                                 // guarded by mu_
  std::unordered_map<std::uint64_t, std::weak_ptr<Connection>> connections_;  // guarded by mu_
};

}  // namespace hearth::listener
