#pragma once
/// The HTTP client behind ctx.fetch in a JS worker: synchronous (a worker runs one call at a time),
/// HTTP/1.1 over TCP or TLS (system CA store, host name verified), through the jail's egress proxy
/// when the endpoint's networkAccess is a host list. Redirects follow the Fetch standard's
/// HTTP-redirect fetch (at most 5, each hop checked against networkAccess again): a redirect
/// from https to http is refused, one to another origin drops Authorization, Cookie and
/// Proxy-Authorization, and 303 (301 and 302 after POST) turns the request into a GET without a
/// body. The connection, the TLS handshake and every read and write have a time limit. URLs are
/// read and responses parsed by the daemon's HTTP client code (httpclient::parse_url,
/// httpclient::ResponseReader), built into the worker.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "egress/network_policy.hpp"

namespace hearth::js {

/// RequestInit's `redirect`: follow (the default), error (a redirect fails the fetch), manual
/// (the redirect response itself is the answer, its Location header readable).
enum class RedirectMode { kFollow, kError, kManual };

/// Longest wait for the connection, or for any byte of the request or the response to move,
/// before the fetch fails: a server that answers a head and then nothing is given up on.
inline constexpr std::chrono::milliseconds kFetchIdleLimit{30000};

struct FetchRequest {
  std::string url;
  std::string method = "GET";
  /// Names must be RFC 9110 tokens and values free of CR, LF and NUL (otherwise the fetch fails
  /// before anything is sent); Host, Content-Length, Connection and Transfer-Encoding are the
  /// client's own and ignored when given, as a browser ignores forbidden header names.
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;
  RedirectMode redirect = RedirectMode::kFollow;
  /// The whole fetch, redirects included (fetch_time_limit() of the call's time left).
  std::chrono::milliseconds timeout{30000};
  std::chrono::milliseconds idle_timeout = kFetchIdleLimit;
  std::size_t max_body = std::size_t{16} * 1024 * 1024;
};

struct FetchResponse {
  int status = 0;
  std::string status_text;
  std::string url;                                           ///< after redirects
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in lower case
  std::string body;
};

/// The jail's egress proxy (which checks the host list again); port 0: connect directly (a daemon
/// run with --insecure-no-sandbox, or networkAccess: true).
struct EgressProxy {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

/// How long one fetch may take when the call has `time_left`: a fifth of it (at most 2 s) is kept
/// back, so that a fetch that cannot finish fails while the handler can still catch the error
/// and answer, before the worker's watchdog stops the call.
std::chrono::milliseconds fetch_time_limit(std::chrono::milliseconds time_left);

/// kPermissionDenied when `policy` (the endpoint's networkAccess) does not allow the URL's host
/// (nothing is sent), otherwise kHandlerError for a malformed URL or header, a refused redirect,
/// a time limit, or a network failure (the message says which).
Result<FetchResponse> fetch(const FetchRequest& request, const egress::NetworkPolicy& policy,
                            const EgressProxy& proxy);

}  // namespace hearth::js
