#include "js/fetch.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>

#include "egress/allowlist.hpp"

namespace hearth::js {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr int kMaxRedirects = 5;

Error failure(std::string message) {
  return Error::make(ErrorCode::kHandlerError, std::move(message));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void set_timeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

std::string authority(const Url& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  return (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
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
  const bool default_port = url.port == (url.tls ? 443 : 80);
  req.set(http::field::host, default_port ? url.host : authority(url));
  req.set(http::field::user_agent, "hearth-js-fetch");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : request.headers) {
    if (lower(name) == "host" || lower(name) == "content-length") continue;
    req.set(name, value);
  }
  if (request.body) {
    req.body() = *request.body;
    req.prepare_payload();
  }
  boost::system::error_code ec;
  http::write(stream, req, ec);
  if (ec) return failure("cannot send the request to " + url.host + ": " + ec.message());
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(request.max_body);
  parser.header_limit(64 * 1024);
  http::read(stream, buffer, parser, ec);
  if (ec == http::error::body_limit) {
    return failure("the response from " + url.host + " is larger than " +
                   std::to_string(request.max_body) + " bytes");
  }
  if (ec && ec != http::error::end_of_stream) {
    return failure("cannot read the response from " + url.host + ": " + ec.message());
  }
  auto res = parser.release();
  FetchResponse out;
  out.status = static_cast<int>(res.result_int());
  out.status_text = std::string(res.reason());
  for (const auto& field : res) {
    std::string name = lower(std::string(field.name_string()));
    auto it = std::find_if(out.headers.begin(), out.headers.end(),
                           [&name](const auto& h) { return h.first == name; });
    if (it != out.headers.end()) {
      it->second += ", " + std::string(field.value());
    } else {
      out.headers.emplace_back(std::move(name), std::string(field.value()));
    }
  }
  out.body = std::move(res.body());
  return out;
}

Result<FetchResponse> fetch_once(const FetchRequest& request, const Url& url,
                                 const NetworkPolicy& policy) {
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  if (policy.proxy_port != 0) {
    auto address = asio::ip::make_address(policy.proxy_host, ec);
    if (ec) return failure("bad egress proxy address '" + policy.proxy_host + "'");
    socket.connect(tcp::endpoint(address, policy.proxy_port), ec);
    if (ec) return failure("cannot reach the jail's egress proxy: " + ec.message());
  } else {
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(url.host, std::to_string(url.port), ec);
    if (ec) return failure("cannot resolve " + url.host + ": " + ec.message());
    asio::connect(socket, endpoints, ec);
    if (ec) return failure("cannot connect to " + authority(url) + ": " + ec.message());
  }
  set_timeouts(socket.native_handle(), request.timeout);

  if (!url.tls) {
    // Through the proxy, plain HTTP goes in absolute form.
    const std::string target = policy.proxy_port != 0
                                   ? "http://" + authority(url) + url.target
                                   : url.target;
    return exchange(socket, request, url, target);
  }
  if (policy.proxy_port != 0) {
    http::request<http::empty_body> connect{http::verb::connect, authority(url), 11};
    connect.set(http::field::host, authority(url));
    http::write(socket, connect, ec);
    if (ec) return failure("cannot talk to the jail's egress proxy: " + ec.message());
    boost::beast::flat_buffer buffer;
    http::response_parser<http::empty_body> parser;
    parser.skip(true);  // a CONNECT answer has no body
    http::read_header(socket, buffer, parser, ec);
    if (ec) return failure("the jail's egress proxy did not answer: " + ec.message());
    if (parser.get().result_int() != 200) {
      if (parser.get().result_int() == 403) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "the egress proxy refused " + authority(url));
      }
      return failure("the egress proxy answered " + std::to_string(parser.get().result_int()) +
                     " to CONNECT " + authority(url));
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

Result<Url> parse_url(std::string_view text) {
  Url url;
  std::string_view rest;
  if (text.substr(0, 7) == "http://") {
    rest = text.substr(7);
  } else if (text.substr(0, 8) == "https://") {
    url.tls = true;
    rest = text.substr(8);
  } else {
    return failure("only http:// and https:// URLs can be fetched: '" + std::string(text) + "'");
  }
  const auto end = rest.find_first_of("/?#");
  std::string_view auth = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (auto hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
  if (auth.find('@') != std::string_view::npos) {
    return failure("URLs with credentials are not fetched: '" + std::string(text) + "'");
  }
  std::string_view port_text;
  if (!auth.empty() && auth.front() == '[') {
    const auto close = auth.find(']');
    if (close == std::string_view::npos) return failure("malformed URL '" + std::string(text) + "'");
    url.host = std::string(auth.substr(1, close - 1));
    if (close + 1 < auth.size()) {
      if (auth[close + 1] != ':') return failure("malformed URL '" + std::string(text) + "'");
      port_text = auth.substr(close + 2);
    }
  } else {
    const auto colon = auth.find(':');
    url.host = std::string(auth.substr(0, colon));
    if (colon != std::string_view::npos) port_text = auth.substr(colon + 1);
  }
  if (url.host.empty()) return failure("the URL has no host: '" + std::string(text) + "'");
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      return failure("bad port in URL '" + std::string(text) + "'");
    }
    url.port = static_cast<std::uint16_t>(port);
  }
  url.target = tail.empty() || tail.front() != '/' ? "/" + std::string(tail) : std::string(tail);
  return url;
}

Result<FetchResponse> fetch(const FetchRequest& request, const NetworkPolicy& policy) {
  FetchRequest current = request;
  std::optional<egress::AllowList> allow;
  if (policy.mode == NetworkPolicy::Mode::kAllowList) {
    auto parsed = egress::AllowList::parse(policy.allow);
    if (!parsed.ok()) return Error::make(ErrorCode::kPermissionDenied, parsed.error().message);
    allow = std::move(parsed).value();
  }
  for (int hop = 0;; ++hop) {
    auto url = parse_url(current.url);
    if (!url.ok()) return std::move(url).error();
    if (policy.mode == NetworkPolicy::Mode::kNone) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + url.value().host +
                             " is not allowed: the endpoint has no networkAccess permission");
    }
    if (allow && !allow->allows(url.value().host, url.value().port)) {
      return Error::make(ErrorCode::kPermissionDenied,
                         "network access to " + authority(url.value()) +
                             " is not allowed by the endpoint's networkAccess");
    }
    auto response = fetch_once(current, url.value(), policy);
    if (!response.ok()) return response;
    const int status = response.value().status;
    const bool redirect = status == 301 || status == 302 || status == 303 || status == 307 ||
                          status == 308;
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
    if (location.front() == '/') {
      const auto& u = url.value();
      location = std::string(u.tls ? "https://" : "http://") + authority(u) + location;
    }
    current.url = location;
    if (status == 303 || ((status == 301 || status == 302) && current.method == "POST")) {
      current.method = "GET";
      current.body.reset();
    }
  }
}

}  // namespace hearth::js
