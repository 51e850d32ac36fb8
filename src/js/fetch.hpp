#pragma once
/// The HTTP client behind ctx.fetch in a JS worker: synchronous (a worker runs one call at a time),
/// HTTP/1.1 over TCP or TLS (system CA store, host name verified), through the jail's egress proxy
/// when the endpoint's networkAccess is a host list, redirects followed (at most 5, each hop
/// checked again). URLs are read and responses parsed by the daemon's HTTP client code
/// (httpclient::parse_url, httpclient::ResponseReader), built into the worker.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "egress/network_policy.hpp"

namespace hearth::js {

struct FetchRequest {
  std::string url;
  std::string method = "GET";
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;
  std::chrono::milliseconds timeout{30000};
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

/// kPermissionDenied when `policy` (the endpoint's networkAccess) does not allow the URL's host
/// (nothing is sent), otherwise kHandlerError for a malformed URL or a network failure.
Result<FetchResponse> fetch(const FetchRequest& request, const egress::NetworkPolicy& policy,
                            const EgressProxy& proxy);

}  // namespace hearth::js
