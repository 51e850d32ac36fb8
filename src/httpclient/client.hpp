#pragma once
/// The daemon's outgoing HTTP/1.1 client (http handlers, MCP servers over Streamable HTTP).
///
/// - Runs on the executor it is given (the daemon's io_context): C++20 coroutines over Beast, no
///   thread of its own. Thread-safe: requests may start from any thread.
/// - http and https; TLS verifies the peer against the system CA store (OpenSSL's default paths,
///   so SSL_CERT_FILE / SSL_CERT_DIR are honoured) and the host name; SNI is sent.
/// - Keep-alive connections are pooled per (scheme, host, port) and reused; an idle connection is
///   dropped after Options::idle_timeout, and a request that fails on a reused connection before
///   any response byte arrived is retried once on a fresh one (only for idempotent methods, or
///   when nothing was written).
/// - Limits: a deadline for the whole exchange (redirects included), a response body limit,
///   a bounded number of redirects (each hop passes Request::allow first). A redirect from https
///   to http is refused; one to another origin drops Authorization, Cookie and
///   Proxy-Authorization.
/// - Errors are values: kPermissionDenied from Request::allow, kTimeout at the deadline, and
///   kHandlerError for everything the network or the peer did (message says what).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "httpclient/url.hpp"

namespace hearth::httpclient {

struct Request {
  std::string method = "GET";
  std::string url;
  /// Sent as given (Host, Content-Length, Connection, Transfer-Encoding are the client's own and
  /// may not be set); a name that is not an RFC 9110 token, a value with CR, LF or NUL, or one of
  /// those four names fails the request with kInvalidParams.
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;
  /// For the whole exchange, redirects included; zero: no deadline (a streaming response the
  /// caller stops through `abort`).
  std::chrono::milliseconds timeout{30000};
  /// Limit of a collected body (kHandlerError "response larger than N bytes"). A streamed body
  /// is bounded by its consumer (on_body returning false), since a stream may be long-lived.
  std::size_t max_response_bytes = std::size_t{16} << 20;
  /// 3xx with a Location are followed this many times at most (then kHandlerError); 0: a 3xx is
  /// returned as it is. 303 (and 301/302 after POST) turn into GET without a body (and without
  /// the Content-* headers).
  int max_redirects = 0;
  /// Asked before any connection to a URL is used (the first one and each redirect, with the
  /// addresses its host resolved to, or for a pooled connection the one address it is connected
  /// to); an error value stops the request with that error. Runs on the client's executor.
  std::function<std::optional<Error>(const Url& url, const std::vector<std::string>& addresses)>
      allow;
  /// Streaming: when set, the body is not collected; each chunk is given here as it arrives (the
  /// status and headers are known: `on_headers` ran first). Returning false stops reading and
  /// closes the connection; request() then returns the response without a body. `on_headers`,
  /// when set, runs once the final response's head is read, streamed or not. Both callbacks run
  /// on the client's executor (a strand of this request: never concurrently), only for the final
  /// response (not for redirects that are followed).
  std::function<void(int status, const std::vector<std::pair<std::string, std::string>>& headers)>
      on_headers;
  std::function<bool(std::string_view chunk)> on_body;
};

struct Response {
  int status = 0;
  std::string url;                                           ///< after redirects
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased, in order
  std::string body;                                          ///< empty when streamed
  /// The first header of that (lower-case) name, or nullopt.
  std::optional<std::string_view> header(std::string_view name) const;
};

/// Stops a request in flight from anywhere (its connection is closed, never reused); request()
/// then returns kHandlerError "aborted". Calling it after the request is harmless; a request
/// started with a handle that already fired returns "aborted" at once.
class Abort {
 public:
  Abort();  ///< a fresh, shared handle: copies stop the same request
  void operator()() const;
  struct State;
  std::shared_ptr<State> state;
};

class Client {
 public:
  struct Options {
    std::size_t max_idle_per_origin = 8;
    std::chrono::milliseconds idle_timeout{30000};
  };

  /// The system CA store is read at the first https request (a failure to read it fails that
  /// request with a clear error), not here: plain-HTTP users never pay for it. (Two constructors
  /// rather than a default argument: GCC 12 cannot use a nested struct's default member
  /// initialisers in a default argument of the enclosing class.)
  explicit Client(boost::asio::any_io_executor executor);
  Client(boost::asio::any_io_executor executor, Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  boost::asio::awaitable<Result<Response>> request(Request request, Abort abort = {});

  /// Closes idle connections and aborts requests in flight; later requests fail with
  /// kHandlerError "the daemon is stopping".
  void shutdown();

  /// Connections opened so far (tests check reuse with it).
  std::uint64_t connections_opened() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace hearth::httpclient
