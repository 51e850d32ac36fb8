#pragma once
/// URLs of HTTP requests: parsing, Location resolution and percent-encoding. No Beast or Asio
/// here, so that the JS worker's ctx.fetch (src/js/fetch.cpp) reads URLs with the same code as
/// the daemon's client.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "common/rfc9110.hpp"

namespace hearth::httpclient {

/// An absolute http(s) URL split into what a request needs.
struct Url {
  bool tls = false;
  std::string host;        ///< as written, without brackets for IPv6, lower-cased
  std::uint16_t port = 0;  ///< the explicit port or the scheme's default
  std::string target;      ///< path and query ("/" at least); the fragment is dropped
  /// "https://host:port" (port omitted when it is the default): the key of the connection pool.
  std::string origin() const;
  /// The Host header: "host" ("[v6]"), with ":port" when it is not the scheme's default.
  std::string host_header() const;
  /// "host:port" ("[v6]:port"), always with the port: a CONNECT target, messages.
  std::string authority() const;
};
/// http:// and https:// only (the scheme in any case); userinfo ("user:pass@") is refused; the
/// host is checked (letters, digits, '.', '-', '_', or a bracketed IPv6 address) and
/// lower-cased; characters a request target may not hold are percent-encoded. kInvalidParams on
/// errors.
Result<Url> parse_url(std::string_view url);
/// Resolves a Location header against the URL it came from (absolute, scheme-relative,
/// absolute-path and relative references).
Result<Url> resolve_location(const Url& base, std::string_view location);
/// RFC 9110 token characters, at least one (header names, methods).
using rfc9110::is_token;
/// Percent-encodes everything but RFC 3986 unreserved characters (for path segments and query
/// values).
std::string encode_component(std::string_view text);

}  // namespace hearth::httpclient
