// The URL half of the HTTP client: parsing, Location resolution and percent-encoding. Kept apart
// from client.cpp so that it compiles without Beast (the JS worker builds it too).
#include "httpclient/url.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <string>
#include <vector>

#include "common/ascii.hpp"
#include "common/rfc3986.hpp"

namespace hearth::httpclient {

namespace {

using ascii::is_alnum;
using ascii::is_digit;
using ascii::lower;

Error invalid(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

/// Characters RFC 3986 allows in a path or query as they are (pchar, '/', '?') plus '%', which
/// is taken to start an escape already made by the writer.
bool is_target_char(char c) {
  return rfc3986::is_pchar(c) || c == '/' || c == '?' || c == '%';
}

void append_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += '%';
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

/// The request target as sent: everything that may not appear in one (spaces, controls,
/// non-ASCII, quotes, braces...) percent-encoded, so that no URL can break the request line.
std::string clean_target(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (is_target_char(c)) {
      out += c;
    } else {
      append_escape(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

bool starts_with_scheme(std::string_view text, std::string_view scheme) {
  return ascii::istarts_with(text, scheme) && text.substr(scheme.size(), 3) == "://";
}

/// RFC 3986 5.2.4: removes "." and ".." segments from an absolute path.
std::string remove_dot_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 1;  // after the leading '/'
  bool trailing_slash = false;
  while (start <= path.size()) {
    const auto end = path.find('/', start);
    const auto segment =
        path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const bool last = end == std::string_view::npos;
    if (segment == ".") {
      trailing_slash = last;
    } else if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
      trailing_slash = last;
    } else {
      segments.push_back(segment);
      trailing_slash = false;
    }
    if (last) break;
    start = end + 1;
  }
  std::string out;
  for (const auto segment : segments) {
    out += '/';
    out += segment;
  }
  if (trailing_slash || out.empty()) out += '/';
  return out;
}

}  // namespace

std::string Url::host_header() const {
  std::string out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

std::string Url::authority() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

std::string Url::origin() const {
  return (tls ? "https://" : "http://") + host_header();
}

Result<Url> parse_url(std::string_view text) {
  Url url;
  std::string_view rest;
  if (starts_with_scheme(text, "http")) {
    rest = text.substr(7);
  } else if (starts_with_scheme(text, "https")) {
    url.tls = true;
    rest = text.substr(8);
  } else {
    return invalid("not an http:// or https:// URL");
  }
  const auto end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (const auto hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) {
    return invalid("URLs with credentials (user:password@) are not allowed");
  }

  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return invalid("unterminated '[' in the URL's host");
    const std::string literal(authority.substr(1, close - 1));
    in6_addr address{};
    if (literal.find('%') != std::string::npos ||
        inet_pton(AF_INET6, literal.c_str(), &address) != 1) {
      return invalid("not a valid IPv6 address in the URL's host");
    }
    for (char c : literal) url.host += lower(c);
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return invalid("unexpected text after ']' in the URL's host");
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.find(':');
    const auto host = authority.substr(0, colon);
    for (char c : host) {
      if (!(is_alnum(c) || c == '.' || c == '-' || c == '_')) {
        return invalid("character not allowed in the URL's host");
      }
      url.host += lower(c);
    }
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
  }
  if (url.host.empty()) return invalid("the URL has no host");

  url.port = url.tls ? 443 : 80;
  if (has_port && !port_text.empty()) {  // "host:" is the default port (RFC 3986 6.2.3)
    unsigned port = 0;
    const auto* first = port_text.data();
    const auto* last = first + port_text.size();
    auto [ptr, ec] = std::from_chars(first, last, port);
    if (ec != std::errc() || ptr != last || port == 0 || port > 65535 || !is_digit(*first)) {
      return invalid("the URL's port must be a number from 1 to 65535");
    }
    url.port = static_cast<std::uint16_t>(port);
  }
  url.target = clean_target(tail);
  if (url.target.empty() || url.target.front() != '/') url.target.insert(0, "/");
  return url;
}

Result<Url> resolve_location(const Url& base, std::string_view location) {
  // Leading and trailing white space is not part of a reference (servers sometimes add it).
  location = ascii::trim(location);
  // An absolute reference: a scheme, then ':'.
  if (const auto colon = location.find(':');
      colon != std::string_view::npos && rfc3986::is_scheme(location.substr(0, colon))) {
    return parse_url(location);
  }
  if (location.substr(0, 2) == "//") {
    return parse_url(std::string(base.tls ? "https:" : "http:") + std::string(location));
  }
  if (const auto hash = location.find('#'); hash != std::string_view::npos) {
    location = location.substr(0, hash);
  }
  const std::string_view base_target = base.target;
  const auto base_query = base_target.find('?');
  const std::string_view base_path = base_target.substr(0, base_query);

  std::string merged;
  if (location.empty()) {
    merged = std::string(base_target);
  } else if (location.front() == '/') {
    merged = std::string(location);
  } else if (location.front() == '?') {
    merged = std::string(base_path) + std::string(location);
  } else {
    const auto slash = base_path.rfind('/');
    merged = std::string(base_path.substr(0, slash + 1)) + std::string(location);
  }
  const auto query = merged.find('?');
  std::string target = remove_dot_segments(std::string_view(merged).substr(0, query));
  if (query != std::string::npos) target += merged.substr(query);
  return parse_url(base.origin() + target);
}

std::string encode_component(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (rfc3986::is_unreserved(c)) {
      out += c;
    } else {
      append_escape(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

}  // namespace hearth::httpclient
