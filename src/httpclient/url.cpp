// The URL half of the HTTP client: parsing, Location resolution and percent-encoding. Kept apart
// from client.cpp so that it compiles without Beast.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <string>
#include <vector>

#include "httpclient/client.hpp"

namespace hearth::httpclient {

namespace {

Error invalid(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_unreserved(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/// Characters RFC 3986 allows in a path or query as they are (unreserved, sub-delims, ':', '@',
/// '/', '?') plus '%', which is taken to start an escape already made by the writer.
bool is_target_char(char c) {
  if (is_unreserved(c)) return true;
  switch (c) {
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
    case ':':
    case '@':
    case '/':
    case '?':
    case '%':
      return true;
    default:
      return false;
  }
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
  if (text.size() < scheme.size() + 3) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (lower(text[i]) != scheme[i]) return false;
  }
  return text.substr(scheme.size(), 3) == "://";
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

std::string Url::origin() const {
  std::string out = tls ? "https://" : "http://";
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
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
      if (!(is_alpha(c) || is_digit(c) || c == '.' || c == '-' || c == '_')) {
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
  while (!location.empty() && (location.front() == ' ' || location.front() == '\t')) {
    location.remove_prefix(1);
  }
  while (!location.empty() && (location.back() == ' ' || location.back() == '\t')) {
    location.remove_suffix(1);
  }
  // An absolute reference: a scheme, then ':'.
  const auto colon = location.find(':');
  if (colon != std::string_view::npos && colon > 0 && is_alpha(location.front())) {
    const auto scheme = location.substr(0, colon);
    bool is_scheme = true;
    for (char c : scheme) {
      if (!(is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.')) is_scheme = false;
    }
    if (is_scheme) return parse_url(location);
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

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string encode_component(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (is_unreserved(c)) {
      out += c;
    } else {
      append_escape(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i) same = lower(key[i]) == lower(name[i]);
    if (same) return std::string_view(value);
  }
  return std::nullopt;
}

}  // namespace hearth::httpclient
