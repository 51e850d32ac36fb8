#pragma once
/// The server's route table: which handler answers an HTTP request, by path. JSON-RPC (`/rpc`)
/// and the WebSocket (`/ws`) are built into the server; everything else a component serves
/// over HTTP (pages and files of the view host, `/mcp`, `/.well-known/...`) is a Route added
/// here, without touching the connection code. The security rules run before any route: the
/// Host and Origin checks always, the token as the route's Access says.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace hearth::net {

/// A request as a route handler sees it, its body read in full (within max_request_bytes).
struct HttpRequest {
  std::string method;  ///< "GET", "POST", ... ("HEAD" reaches a GET route as "HEAD")
  std::string path;    ///< the target before '?', as sent (not percent-decoded)
  std::string query;   ///< after '?', as sent
  std::vector<std::pair<std::string, std::string>> headers;  ///< names in lower case
  std::string body;
  /// The first header named `name` (lower case).
  std::optional<std::string_view> header(std::string_view name) const;
};

/// A body written as it is produced, with chunked transfer coding (server-sent events). The
/// server writes the head, then each piece next() gives until it gives nullopt, then ends the
/// connection. The peer closing its side, or the server stopping, calls cancel(): next() must
/// then end soon. A producer that may stay silent sends comments now and then, so that a peer
/// gone without a word is noticed at the next write.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  /// The next piece of the body, or nullopt at its end. Called on the connection's strand, one
  /// call at a time.
  virtual boost::asio::awaitable<std::optional<std::string>> next() = 0;
  /// From any thread, any number of times.
  virtual void cancel() = 0;
};

/// A route handler's answer. The server adds Server, X-Content-Type-Options: nosniff, the CORS
/// headers of an allowed cross origin, Content-Length, and Cache-Control: no-store unless the
/// handler set a Cache-Control of its own. A HEAD request gets the headers without the body.
struct HttpResponse {
  int status = 200;
  std::string content_type;  ///< empty for none
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// When set, the body is this stream (and `body` is ignored); never for HEAD.
  std::shared_ptr<BodyStream> stream = nullptr;
};

/// What a request must show to reach a route.
enum class Access {
  kToken,         ///< `Authorization: Bearer <token>`
  kTokenOrQuery,  ///< the header, or `?token=` (what a browser can send when it navigates)
  kOpen,          ///< nothing beyond the Host and Origin checks (content that is not secret)
};

using RouteHandler = std::function<boost::asio::awaitable<HttpResponse>(HttpRequest)>;

struct Route {
  /// The path served: exact, or every path below it when it ends with '/'.
  std::string path;
  /// Methods accepted ("GET" accepts HEAD too); others get 405 with Allow.
  std::vector<std::string> methods = {"GET"};
  Access access = Access::kToken;
  RouteHandler handler;
  /// Also answers GET and HEAD requests sent with `Origin: null` (an opaque origin: what a
  /// sandboxed frame's subresource requests carry). Only for content fetched by a view frame;
  /// never for routes that act.
  bool opaque_origin = false;
  /// For a page of an allowed cross origin (--allow-origin): request headers it may send beyond
  /// Authorization and Content-Type (the preflight's Access-Control-Allow-Headers), and response
  /// headers it may read (Access-Control-Expose-Headers).
  std::vector<std::string> cors_request_headers = {};
  std::vector<std::string> cors_expose_headers = {};
};

class Routes {
 public:
  /// Adds a route. Refuses a path that does not start with '/', one already routed, /rpc and
  /// /ws (built in), a route without a handler or methods.
  Status add(Route route);
  /// The route for `path`: the exact path first, then the longest prefix route.
  const Route* find(std::string_view path) const;
  bool empty() const { return routes_.empty(); }

 private:
  std::vector<Route> routes_;
};

/// The methods a route accepts, as an Allow header value ("GET, HEAD, OPTIONS").
std::string allow_header(const Route& route);

/// Whether `route` accepts `method`.
bool accepts(const Route& route, std::string_view method);

}  // namespace hearth::net
