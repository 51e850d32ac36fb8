#include "js/fetch.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <type_traits>

#include "common/ascii.hpp"
#include "egress/allowlist.hpp"
#include "httpclient/response_reader.hpp"
#include "httpclient/url.hpp"

namespace hearth::js {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using httpclient::Url;
using FetchClock = std::chrono::steady_clock;

namespace {

constexpr int kMaxRedirects = 5;

Error fetch_failure(std::string message) {
  return Error::make(ErrorCode::kHandlerError, std::move(message));
}

/// "2.4 s", "30 s".
std::string seconds_text(std::chrono::milliseconds ms) {
  char text[32];
  if (ms >= std::chrono::seconds(10)) {
    std::snprintf(text, sizeof text, "%lld s", static_cast<long long>((ms.count() + 500) / 1000));
  } else {
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  }
  return text;
}

/// The I/O of one hop: a socket on an io_context of its own, each operation bounded by the idle
/// limit and by the end of the whole fetch. (Asio's blocking calls cannot be given a time limit:
/// on a socket with SO_RCVTIMEO they wait again after the timeout, so every operation here is
/// asynchronous and the context runs until it completes or its time is up.)
class FetchConnection {
 public:
  FetchConnection(FetchClock::time_point end, std::chrono::milliseconds idle)
      : end_(end), idle_(idle) {}

  asio::io_context& io() { return io_; }
  tcp::socket& socket() { return socket_; }

  struct Outcome {
    boost::system::error_code ec;
    std::size_t bytes = 0;
    bool stalled = false;  ///< nothing happened within the idle limit, or before the fetch's end
    bool at_end = false;   ///< what stopped it was the fetch's end (the call's time limit)
    std::chrono::milliseconds waited{0};
  };

  /// Runs the asynchronous operation that `start(handler)` begins until it completes or its time
  /// is up; then the socket is closed (the connection is not used again), which ends the
  /// operation.
  template <class Start>
  Outcome run(Start start) {
    Outcome out;
    bool done = false;
    const auto began = FetchClock::now();
    const bool idle_first = began + idle_ < end_;
    const auto limit = idle_first ? began + idle_ : end_;
    io_.restart();
    start([&out, &done](const boost::system::error_code& ec, auto&&... rest) {
      out.ec = ec;
      (take_bytes(out.bytes, rest), ...);
      done = true;
    });
    io_.run_until(limit);
    if (!done) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      io_.restart();
      io_.run();  // the closed operation's handler
      out.stalled = true;
      out.at_end = !idle_first;
    }
    out.waited = std::chrono::duration_cast<std::chrono::milliseconds>(FetchClock::now() - began);
    return out;
  }

 private:
  template <class T>
  static void take_bytes(std::size_t& bytes, const T& value) {
    if constexpr (std::is_same_v<std::decay_t<T>, std::size_t>) bytes = value;
  }

  FetchClock::time_point end_;
  std::chrono::milliseconds idle_;
  asio::io_context io_{1};
  tcp::socket socket_{io_};
};

/// "the response from https://host stopped for 2.4 s", and why it was given up on.
Error stalled(const std::string& what, const FetchConnection::Outcome& outcome) {
  return fetch_failure(
      what + " stopped for " + seconds_text(outcome.waited) +
      (outcome.at_end ? " (the call's time limit is near: ctx.fetch gives up first, so that the "
                        "handler can still answer)"
                      : " (the longest ctx.fetch waits for a server)"));
}

/// Feeds `reader` from `stream` until it has the whole response, or with `head_only` its head.
/// The server closing the connection (on TLS also without close_notify) is for the reader to
/// judge: it ends a body that has no length. `what` names the response in errors.
template <class Stream>
Status read_response(FetchConnection& conn, Stream& stream, httpclient::ResponseReader& reader,
                     const httpclient::ResponseReader::BodySink& sink, bool head_only,
                     const std::string& what) {
  const auto finished = [&] { return head_only ? reader.head_done() : reader.done(); };
  std::string pending;  // read, not yet taken by the reader
  std::array<char, 16 * 1024> chunk{};
  while (!finished()) {
    auto read = conn.run(
        [&](auto handler) { stream.async_read_some(asio::buffer(chunk), std::move(handler)); });
    if (read.stalled) return stalled(what, read);
    if (read.ec == asio::error::eof || read.ec == asio::ssl::error::stream_truncated) {
      if (auto closed = reader.close(); !closed.ok()) {
        return fetch_failure("cannot read " + what + ": " + closed.error().message);
      }
      return {};
    }
    if (read.ec) return fetch_failure("cannot read " + what + ": " + read.ec.message());
    pending.append(chunk.data(), read.bytes);
    while (!pending.empty() && !finished()) {
      auto used = reader.put(pending, sink);
      if (!used.ok()) {
        if (reader.too_large()) return std::move(used).error();
        return fetch_failure("cannot read " + what + ": " + used.error().message);
      }
      if (used.value() == 0) break;  // the reader needs more bytes
      pending.erase(0, used.value());
    }
  }
  return {};
}

/// Methods the Fetch standard normalises to upper case ("post" is POST); others go as written.
std::string normalized_method(const std::string& method) {
  for (const char* known : {"DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"}) {
    if (ascii::iequals(method, known)) return known;
  }
  return method;
}

/// True for the headers the client writes itself (a value given for them is ignored).
bool client_header(const std::string& name) {
  return ascii::iequals(name, "host") || ascii::iequals(name, "content-length") ||
         ascii::iequals(name, "connection") || ascii::iequals(name, "transfer-encoding");
}

Status check_headers(std::vector<std::pair<std::string, std::string>>& headers) {
  for (const auto& [name, value] : headers) {
    if (!httpclient::is_token(name)) return fetch_failure("'" + name + "' is not a header name");
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return fetch_failure("the value of header " + name + " contains CR, LF or NUL");
    }
  }
  std::erase_if(headers, [](const auto& h) { return client_header(h.first); });
  return {};
}

void drop_headers(std::vector<std::pair<std::string, std::string>>& headers,
                  std::initializer_list<std::string_view> names) {
  std::erase_if(headers, [&names](const auto& h) {
    return std::any_of(names.begin(), names.end(),
                       [&h](std::string_view name) { return ascii::iequals(h.first, name); });
  });
}

/// The Fetch standard's HTTP-redirect fetch (https://fetch.spec.whatwg.org/#http-redirect-fetch),
/// applied to the request before it goes on from `from` to `to` after a `status` redirect.
Status follow_redirect(FetchRequest& request, const Url& from, const Url& to, int status) {
  // Not in the standard (a browser leaves it to mixed-content rules): a handler's request never
  // goes on unencrypted once it started over TLS.
  if (from.tls && !to.tls) {
    return fetch_failure("refusing to follow a redirect from https to http (" + to.origin() +
                         "): the request would go on unencrypted");
  }
  // Step 12: 301 and 302 after POST, and 303 after anything but GET and HEAD, become a GET
  // without a body and without the request-body headers.
  if ((status == 303 && request.method != "GET" && request.method != "HEAD") ||
      ((status == 301 || status == 302) && request.method == "POST")) {
    request.method = "GET";
    request.body.reset();
    drop_headers(request.headers, {"content-type", "content-encoding", "content-language",
                                   "content-location", "content-length"});
  }
  // Step 13: on to another origin, the credentials of the first are not carried: Authorization
  // (the standard's CORS non-wildcard request-header name), and Cookie and Proxy-Authorization,
  // which a browser never lets a script set at all.
  if (from.origin() != to.origin()) {
    drop_headers(request.headers, {"authorization", "cookie", "proxy-authorization"});
  }
  return {};
}

/// One request/response exchange on an established stream.
template <class Stream>
Result<FetchResponse> exchange(FetchConnection& conn, Stream& stream, const FetchRequest& request,
                               const Url& url, const std::string& target) {
  http::request<http::string_body> req;
  req.version(11);
  req.target(target);
  auto verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) {
    return fetch_failure("unsupported method '" + request.method + "'");
  }
  req.method(verb);
  req.set(http::field::host, url.host_header());
  req.set(http::field::user_agent, "hearth-js-fetch");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : request.headers) req.set(name, value);
  if (request.body) {
    req.body() = *request.body;
    req.prepare_payload();
  }
  auto sent = conn.run([&](auto handler) { http::async_write(stream, req, std::move(handler)); });
  if (sent.stalled) return stalled("sending the request to " + url.origin(), sent);
  if (sent.ec) {
    return fetch_failure("cannot send the request to " + url.host + ": " + sent.ec.message());
  }

  httpclient::ResponseReader reader(
      {.max_body = request.max_body, .head_request = request.method == "HEAD"});
  FetchResponse out;
  const httpclient::ResponseReader::BodySink sink = [&out](std::string_view piece) {
    out.body.append(piece);
    return true;
  };
  if (auto read =
          read_response(conn, stream, reader, sink, false, "the response from " + url.origin());
      !read.ok()) {
    if (reader.too_large()) {
      return fetch_failure("the response from " + url.host + " is larger than " +
                           std::to_string(request.max_body) + " bytes");
    }
    return std::move(read).error();
  }
  out.status = reader.status();
  out.status_text = reader.reason();
  for (auto& [name, value] : reader.headers()) {
    // Named: clang 14 cannot capture a structured binding.
    const std::string& header_name = name;
    auto it = std::find_if(out.headers.begin(), out.headers.end(),
                           [&header_name](const auto& h) { return h.first == header_name; });
    if (it != out.headers.end()) {
      it->second += ", " + value;
    } else {
      out.headers.emplace_back(std::move(name), std::move(value));
    }
  }
  return out;
}

Result<FetchResponse> fetch_once(const FetchRequest& request, const Url& url,
                                 const EgressProxy& proxy, FetchClock::time_point end) {
  FetchConnection conn(end, request.idle_timeout);
  auto& socket = conn.socket();
  boost::system::error_code ec;
  if (proxy.port != 0) {
    auto address = asio::ip::make_address(proxy.host, ec);
    if (ec) return fetch_failure("bad egress proxy address '" + proxy.host + "'");
    auto connected = conn.run([&](auto handler) {
      socket.async_connect(tcp::endpoint(address, proxy.port), std::move(handler));
    });
    if (connected.stalled) return stalled("connecting to the jail's egress proxy", connected);
    if (connected.ec) {
      return fetch_failure("cannot reach the jail's egress proxy: " + connected.ec.message());
    }
  } else {
    // Name resolution is the system resolver's, bounded by its own time limits (resolv.conf);
    // in the jail there is none (a host list goes through the egress proxy).
    tcp::resolver resolver(conn.io());
    auto endpoints = resolver.resolve(url.host, std::to_string(url.port), ec);
    if (ec) return fetch_failure("cannot resolve " + url.host + ": " + ec.message());
    auto connected =
        conn.run([&](auto handler) { asio::async_connect(socket, endpoints, std::move(handler)); });
    if (connected.stalled) return stalled("connecting to " + url.authority(), connected);
    if (connected.ec) {
      return fetch_failure("cannot connect to " + url.authority() + ": " + connected.ec.message());
    }
  }

  if (!url.tls) {
    // Through the proxy, plain HTTP goes in absolute form.
    const std::string target =
        proxy.port != 0 ? "http://" + url.authority() + url.target : url.target;
    return exchange(conn, socket, request, url, target);
  }
  if (proxy.port != 0) {
    http::request<http::empty_body> connect{http::verb::connect, url.authority(), 11};
    connect.set(http::field::host, url.authority());
    auto sent =
        conn.run([&](auto handler) { http::async_write(socket, connect, std::move(handler)); });
    if (sent.stalled) return stalled("talking to the jail's egress proxy", sent);
    if (sent.ec) {
      return fetch_failure("cannot talk to the jail's egress proxy: " + sent.ec.message());
    }
    // A CONNECT answer has no body: only its head is read, as for HEAD.
    httpclient::ResponseReader answer({.max_body = 0, .head_request = true});
    const httpclient::ResponseReader::BodySink none = [](std::string_view) { return false; };
    if (auto read = read_response(conn, socket, answer, none, true,
                                  "the jail's egress proxy's answer to CONNECT " + url.authority());
        !read.ok()) {
      return std::move(read).error();
    }
    if (answer.status() != 200) {
      if (answer.status() == 403) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "the egress proxy refused " + url.authority());
      }
      return fetch_failure("the egress proxy answered " + std::to_string(answer.status()) +
                           " to CONNECT " + url.authority());
    }
  }
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.set_default_verify_paths(ec);
  tls.set_verify_mode(asio::ssl::verify_peer);
  asio::ssl::stream<tcp::socket&> stream(socket, tls);
  if (!SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str())) {
    return fetch_failure("cannot set the TLS server name for " + url.host);
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(url.host));
  auto handshake = conn.run([&](auto handler) {
    stream.async_handshake(asio::ssl::stream_base::client, std::move(handler));
  });
  if (handshake.stalled) return stalled("the TLS handshake with " + url.host, handshake);
  if (handshake.ec) {
    return fetch_failure("TLS handshake with " + url.host + " failed: " + handshake.ec.message());
  }
  // No TLS shutdown after the response: the request said `Connection: close` and the response
  // is complete, and waiting for a peer's close_notify is one more wait a server could stall.
  return exchange(conn, stream, request, url, url.target);
}

}  // namespace

std::chrono::milliseconds fetch_time_limit(std::chrono::milliseconds time_left) {
  const auto reserve =
      std::min<std::chrono::milliseconds>(time_left / 5, std::chrono::milliseconds(2000));
  return std::max(std::chrono::milliseconds(1), time_left - reserve);
}

Result<FetchResponse> fetch(const FetchRequest& request, const egress::NetworkPolicy& policy,
                            const EgressProxy& proxy) {
  using Mode = egress::NetworkPolicy::Mode;
  const auto end = FetchClock::now() + request.timeout;
  FetchRequest current = request;
  current.method = normalized_method(request.method);
  HEARTH_RETURN_IF_ERROR(check_headers(current.headers));
  auto parsed = httpclient::parse_url(current.url);
  if (!parsed.ok()) {
    return fetch_failure("cannot fetch '" + current.url + "': " + parsed.error().message);
  }
  Url url = std::move(parsed).value();
  for (int hop = 0;; ++hop) {
    if (policy.mode() == Mode::kNone) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + url.host +
                             " is not allowed: the endpoint has no networkAccess permission");
    }
    if (policy.mode() == Mode::kList && !policy.list().allows(url.host, url.port)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + url.authority() +
                             " is not allowed by the endpoint's networkAccess");
    }
    auto response = fetch_once(current, url, proxy, end);
    if (!response.ok()) return response;
    const int status = response.value().status;
    const bool redirect =
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    std::string location;
    for (const auto& [name, value] : response.value().headers) {
      if (name == "location") location = value;
    }
    if (!redirect || location.empty() || current.redirect == RedirectMode::kManual) {
      response.value().url = current.url;
      return response;
    }
    if (current.redirect == RedirectMode::kError) {
      return fetch_failure("the response from " + url.origin() + " is a redirect (" +
                           std::to_string(status) + " to " + location +
                           ") and the request said redirect: \"error\"");
    }
    if (hop + 1 > kMaxRedirects) {
      return fetch_failure("too many redirects (more than " + std::to_string(kMaxRedirects) + ")");
    }
    auto next = httpclient::resolve_location(url, location);
    if (!next.ok()) {
      return fetch_failure("cannot follow the redirect to '" + location +
                           "': " + next.error().message);
    }
    HEARTH_RETURN_IF_ERROR(follow_redirect(current, url, next.value(), status));
    url = std::move(next).value();
    current.url = url.origin() + url.target;
  }
}

}  // namespace hearth::js
