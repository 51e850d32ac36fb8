#pragma once
/// The egress proxy's reading of one request head (request line and header fields, up to and
/// including the empty line). Separate from the socket code so that the rules can be tested
/// one by one.
///
/// Accepted: `CONNECT host:port HTTP/1.x` (authority-form, port required), and any other method
/// with an absolute-form `http://` target. Everything else is a RequestRejection carrying the
/// HTTP status to answer: origin-form and asterisk-form targets (this is a proxy, not a server),
/// `https://` targets (those are tunnelled with CONNECT), user info in the URL, bare CR or LF,
/// obsolete line folding, whitespace before a colon, control characters, ambiguous body framing
/// (Content-Length with Transfer-Encoding, differing or non-numeric Content-Length,
/// Transfer-Encoding not ending in chunked). The parser is strict on purpose: what it accepts,
/// the origin server must read the same way.
///
/// For a forwarded request it builds the head to send upstream: the request line in
/// origin-form, Host set from the URL (a received Host is replaced, RFC 9112 3.2.2, which also
/// stops fronting a different virtual host behind an allowed name), the hop-by-hop fields and
/// every Proxy-* field dropped (Connection, Keep-Alive, Upgrade, and the fields Connection
/// names, except the framing fields Content-Length and Transfer-Encoding, which describe the
/// body relayed as is), and `Connection: close` appended so that one connection carries one
/// exchange. The body is not parsed: it follows the head unchanged.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "egress/host.hpp"

namespace hearth::egress {

struct ProxyRequest {
  enum class Kind : std::uint8_t { kConnect, kForward };
  Kind kind = Kind::kConnect;
  std::string method;
  Host host;
  std::uint16_t port = 0;
  /// kForward only: the complete head to send to the origin server.
  std::string upstream_head;
};

/// A request the proxy answers itself: the status (400, 505, ...) and a short reason.
struct RequestRejection {
  int status = 400;
  std::string reason;
};

/// `head` is the request head including its terminating CRLF CRLF (leading empty lines already
/// skipped).
std::variant<ProxyRequest, RequestRejection> parse_proxy_request(std::string_view head);

}  // namespace hearth::egress
