#pragma once
/// Proxy: the allow-listing HTTP egress proxy that is a jailed handler's only way out.
///
/// A handler with `networkAccess: [...]` runs in its own network namespace; the jail launcher
/// binds a listening socket there and hands the fd to the daemon, which serves it with a Proxy.
/// Accepted connections come from inside the jail; outgoing ones are made from the daemon's
/// namespace. The handler sees it through HTTP_PROXY / HTTPS_PROXY.
///
/// What it does with each client connection (one request per connection):
///   - `CONNECT host:port`: if the AllowList permits it, resolves the name, connects (within
///     connect_timeout), answers `200 Connection Established` and relays bytes both ways, with
///     proper half-close, until both sides have closed or nothing moved for idle_timeout.
///   - `METHOD http://host[:port]/path`: if permitted, sends the head upstream in origin-form
///     (Host from the URL, hop-by-hop and Proxy-* fields dropped, `Connection: close`), then
///     relays the rest of both streams as is. See proxy_request.hpp for the exact rules.
///   - Refusals, answered by the proxy with a short text/plain body and `Connection: close`:
///     403 not in the list, 400 malformed or not a proxy request (origin-form), 431 head over
///     max_header_bytes, 505 other HTTP versions, 502 resolution or connection failure, 504
///     resolution plus connection over connect_timeout, 503 over max_connections.
///
/// Guarantees:
///   - A host the list does not permit is never resolved: no DNS query leaks its name.
///   - IP literals are connected to only when the list names that address; names are matched
///     as names (see allowlist.hpp).
///   - DNS-rebinding defence: addresses a name resolves to that point back at the daemon's own
///     host (loopback, unspecified 0.0.0.0/8 and ::, link-local such as 169.254.169.254,
///     multicast, broadcast, and their IPv4-mapped forms) are skipped, unless the name is
///     "localhost" or ends in ".localhost"; if none is left the answer is 403. To reach a
///     service on the daemon's host, list "localhost:PORT" or the literal address.
///   - No exception escapes on the request path; every refusal or failure is an HTTP answer.
///   - Each request produces exactly one ProxyEvent (also the refused and malformed ones); a
///     connection that closes, or times out, before its request head is complete produces none.
///   - Safe with an io_context run by several threads: each connection lives on its own strand.
///
/// Not done: TLS inspection (a CONNECT tunnel to an allowed name carries whatever the client
/// sends, including an SNI or Host for another name served by the same endpoint), and
/// keep-alive towards the client for plain HTTP (one exchange per connection).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/fd.hpp"
#include "common/result.hpp"
#include "egress/allowlist.hpp"

namespace hearth::egress {

/// One decision of the proxy, for the audit log.
struct ProxyEvent {
  /// Canonical host asked for (IPv6 without brackets); empty when the request did not get as
  /// far as naming one (malformed, over the connection limit).
  std::string host;
  std::uint16_t port = 0;
  /// The policy decision: true when the AllowList permits host:port.
  bool allowed = false;
  /// What the proxy answered: 200 for an established tunnel, 0 for a forwarded request (the
  /// origin server answers), otherwise the refusal or failure status (403, 400, 502, ...).
  int status = 0;
  /// Human-readable: "CONNECT tunnel to 93.184.216.34:443", "not allowed by networkAccess",
  /// "connect to 10.0.0.1:80 failed: Connection refused", "malformed request line", ...
  std::string detail;
};

/// Resolves a host name to addresses. Called only for names the AllowList permits (never for
/// IP literals), on the connection's strand; the result is awaited at most until the
/// connection's connect_timeout. An error's message goes into the 502 answer and the event.
using Resolver =
    std::function<boost::asio::awaitable<Result<std::vector<boost::asio::ip::address>>>(
        std::string host)>;

struct ProxyOptions {
  AllowList allow;
  /// Resolution plus connection, all addresses tried in turn.
  std::chrono::milliseconds connect_timeout{10000};
  /// Time to receive the request head, and longest pause in a relay before both sides are
  /// closed.
  std::chrono::milliseconds idle_timeout{120000};
  /// Client connections served at once; further ones get 503 and are closed.
  std::size_t max_connections = 64;
  /// Longest request head (request line plus header fields); longer ones get 431.
  std::size_t max_header_bytes = std::size_t{16} * 1024;
  /// Receives each ProxyEvent. May be empty. Called from the proxy's I/O threads, one call at a
  /// time, never after stop() has returned; it must not block, and must not wait for another
  /// thread's stop() of this proxy. Calling stop() from inside it is allowed.
  std::function<void(const ProxyEvent&)> on_event;
  /// Empty: the system resolver (getaddrinfo, through Asio). Tests substitute their own.
  Resolver resolve;
};

class Proxy {
 public:
  /// Serves `listen_fd` (a listening TCP socket, IPv4 or IPv6, possibly bound in another network
  /// namespace; made close-on-exec) on `executor` until stop(). On an error the fd is closed.
  /// Errors (kInvalidParams): not a listening TCP socket, invalid options.
  static Result<std::shared_ptr<Proxy>> start(boost::asio::any_io_executor executor, Fd listen_fd,
                                              ProxyOptions options);

  /// Calls stop(). Stop or destroy the proxy before its executor's execution context goes.
  virtual ~Proxy();

  /// Closes the listener and every connection (tunnels included) and reports no event after
  /// it returns. The sockets themselves are closed on their strands right after, so the
  /// executor must keep running (or be destroyed) for them to go. Idempotent, thread-safe.
  virtual void stop() = 0;

  /// Client connections open right now.
  virtual std::size_t connection_count() const = 0;
};

}  // namespace hearth::egress
