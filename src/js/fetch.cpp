#include "js/fetch.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/http.hpp>

#include "common/ascii.hpp"
#include "egress/allowlist.hpp"
#include "httpclient/response_reader.hpp"
#include "httpclient/url.hpp"

namespace hearth::js {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using httpclient::Url;

namespace {

constexpr int kMaxRedirects = 5;

Error failure(std::string message) {
  return Error::make(ErrorCode::kHandlerError, std::move(message));
}

void set_timeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/// Feeds `reader` from `stream` until it has the whole response, or with `head_only` its head.
/// The server closing the connection (on TLS also without close_notify) is for the reader to
/// judge: it ends a body that has no length. Errors: the reader's, or the failed read's.
template <class Stream>
Status read_response(Stream& stream, httpclient::ResponseReader& reader,
                     const httpclient::ResponseReader::BodySink& sink, bool head_only) {
  const auto finished = [&] { return head_only ? reader.head_done() : reader.done(); };
  std::string pending;  // read, not yet taken by the reader
  std::array<char, 16 * 1024> chunk{};
  boost::system::error_code ec;
  while (!finished()) {
    const std::size_t n = stream.read_some(asio::buffer(chunk), ec);
    if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) return reader.close();
    if (ec) return failure(ec.message());
    pending.append(chunk.data(), n);
    while (!pending.empty() && !finished()) {
      HEARTH_ASSIGN_OR_RETURN(const std::size_t used, reader.put(pending, sink));
      if (used == 0) break;  // the reader needs more bytes
      pending.erase(0, used);
    }
  }
  return {};
}

/// One request/response exchange on an established stream.
template <class Stream>
Result<FetchResponse> exchange(Stream& stream, const FetchRequest& request, const Url& url,
                               const std::string& target) {
  http::request<http::string_body> req;
  req.version(11);
  req.target(target);
  auto verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) return failure("unsupported method '" + request.method + "'");
  req.method(verb);
  req.set(http::field::host, url.host_header());
  req.set(http::field::user_agent, "hearth-js-fetch");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : request.headers) {
    if (ascii::iequals(name, "host") || ascii::iequals(name, "content-length")) continue;
    req.set(name, value);
  }
  if (request.body) {
    req.body() = *request.body;
    req.prepare_payload();
  }
  boost::system::error_code ec;
  http::write(stream, req, ec);
  if (ec) return failure("cannot send the request to " + url.host + ": " + ec.message());

  httpclient::ResponseReader reader(
      {.max_body = request.max_body, .head_request = request.method == "HEAD"});
  FetchResponse out;
  const httpclient::ResponseReader::BodySink sink = [&out](std::string_view piece) {
    out.body.append(piece);
    return true;
  };
  if (auto read = read_response(stream, reader, sink, false); !read.ok()) {
    if (reader.too_large()) {
      return failure("the response from " + url.host + " is larger than " +
                     std::to_string(request.max_body) + " bytes");
    }
    return failure("cannot read the response from " + url.host + ": " + read.error().message);
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
                                 const EgressProxy& proxy) {
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  if (proxy.port != 0) {
    auto address = asio::ip::make_address(proxy.host, ec);
    if (ec) return failure("bad egress proxy address '" + proxy.host + "'");
    socket.connect(tcp::endpoint(address, proxy.port), ec);
    if (ec) return failure("cannot reach the jail's egress proxy: " + ec.message());
  } else {
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(url.host, std::to_string(url.port), ec);
    if (ec) return failure("cannot resolve " + url.host + ": " + ec.message());
    asio::connect(socket, endpoints, ec);
    if (ec) return failure("cannot connect to " + url.authority() + ": " + ec.message());
  }
  set_timeouts(socket.native_handle(), request.timeout);

  if (!url.tls) {
    // Through the proxy, plain HTTP goes in absolute form.
    const std::string target =
        proxy.port != 0 ? "http://" + url.authority() + url.target : url.target;
    return exchange(socket, request, url, target);
  }
  if (proxy.port != 0) {
    http::request<http::empty_body> connect{http::verb::connect, url.authority(), 11};
    connect.set(http::field::host, url.authority());
    http::write(socket, connect, ec);
    if (ec) return failure("cannot talk to the jail's egress proxy: " + ec.message());
    // A CONNECT answer has no body: only its head is read, as for HEAD.
    httpclient::ResponseReader answer({.max_body = 0, .head_request = true});
    const httpclient::ResponseReader::BodySink none = [](std::string_view) { return false; };
    if (auto read = read_response(socket, answer, none, true); !read.ok()) {
      return failure("the jail's egress proxy did not answer: " + read.error().message);
    }
    if (answer.status() != 200) {
      if (answer.status() == 403) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "the egress proxy refused " + url.authority());
      }
      return failure("the egress proxy answered " + std::to_string(answer.status()) +
                     " to CONNECT " + url.authority());
    }
  }
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.set_default_verify_paths(ec);
  tls.set_verify_mode(asio::ssl::verify_peer);
  asio::ssl::stream<tcp::socket&> stream(socket, tls);
  if (!SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str())) {
    return failure("cannot set the TLS server name for " + url.host);
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(url.host));
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return failure("TLS handshake with " + url.host + " failed: " + ec.message());
  auto result = exchange(stream, request, url, url.target);
  stream.shutdown(ec);  // errors here (peer closed first) do not matter
  return result;
}

}  // namespace

Result<FetchResponse> fetch(const FetchRequest& request, const egress::NetworkPolicy& policy,
                            const EgressProxy& proxy) {
  using Mode = egress::NetworkPolicy::Mode;
  FetchRequest current = request;
  for (int hop = 0;; ++hop) {
    auto url = httpclient::parse_url(current.url);
    if (!url.ok()) return failure("cannot fetch '" + current.url + "': " + url.error().message);
    if (policy.mode() == Mode::kNone) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + url.value().host +
                             " is not allowed: the endpoint has no networkAccess permission");
    }
    if (policy.mode() == Mode::kList && !policy.list().allows(url.value().host, url.value().port)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + url.value().authority() +
                             " is not allowed by the endpoint's networkAccess");
    }
    auto response = fetch_once(current, url.value(), proxy);
    if (!response.ok()) return response;
    const int status = response.value().status;
    const bool redirect =
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    std::string location;
    for (const auto& [name, value] : response.value().headers) {
      if (name == "location") location = value;
    }
    if (!redirect || location.empty()) {
      response.value().url = current.url;
      return response;
    }
    if (hop + 1 > kMaxRedirects) {
      return failure("too many redirects (more than " + std::to_string(kMaxRedirects) + ")");
    }
    auto next = httpclient::resolve_location(url.value(), location);
    if (!next.ok()) {
      return failure("cannot follow the redirect to '" + location + "': " + next.error().message);
    }
    current.url = next.value().origin() + next.value().target;
    if (status == 303 || ((status == 301 || status == 302) && current.method == "POST")) {
      current.method = "GET";
      current.body.reset();
    }
  }
}

}  // namespace hearth::js
