#include "egress/proxy_request.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/ascii.hpp"
#include "common/rfc9110.hpp"

namespace hearth::egress {
namespace {

constexpr std::uint16_t kDefaultHttpPort = 80;

RequestRejection reject(std::string reason, int status = 400) {
  return RequestRejection{status, std::move(reason)};
}

using ascii::iequals;
using ascii::is_digit;
using rfc9110::is_token;

/// Field value octets: HTAB, SP, visible ASCII and obs-text; never other control characters.
bool valid_field_value(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

/// Calls `f` with each non-empty, trimmed element of a comma-separated field value.
template <class F>
void for_each_element(std::string_view value, F&& f) {
  while (true) {
    auto comma = value.find(',');
    auto element = ascii::trim(value.substr(0, comma));
    if (!element.empty()) f(element);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

struct Field {
  std::string_view name;
  std::string_view value;
};

bool hop_by_hop(std::string_view name) {
  static constexpr std::string_view kNames[] = {"connection", "keep-alive", "upgrade", "host"};
  if (std::any_of(std::begin(kNames), std::end(kNames), [&](auto n) { return iequals(name, n); })) {
    return true;
  }
  return ascii::istarts_with(name, "proxy-");
}

std::variant<ProxyRequest, RequestRejection> parse_forward(std::string method,
                                                           std::string_view target,
                                                           std::string_view version,
                                                           const std::vector<Field>& fields) {
  if (target.front() == '/' || target == "*") {
    return reject(
        "origin-form request: this is a forward proxy; send an absolute http:// URL or CONNECT");
  }
  auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return reject("request target is not an absolute URL");
  auto scheme = ascii::lower(target.substr(0, scheme_end));
  if (scheme == "https") return reject("https:// URLs must be tunnelled with CONNECT");
  if (scheme != "http") return reject("only http:// URLs can be forwarded");

  auto after_scheme = target.substr(scheme_end + 3);
  auto authority_end = after_scheme.find_first_of("/?#");
  auto authority_text = after_scheme.substr(0, authority_end);
  std::string_view path = authority_end == std::string_view::npos
                              ? std::string_view{}
                              : after_scheme.substr(authority_end);
  if (authority_text.find('@') != std::string_view::npos) {
    return reject("user information in the URL is not supported");
  }
  auto authority = parse_authority(authority_text);
  if (!authority) return reject("URL host: " + authority.error().message);
  path = path.substr(0, path.find('#'));  // a fragment is never sent to a server

  // Body framing: refuse what two parsers could read differently (request smuggling).
  std::vector<std::string> connection_tokens;
  std::optional<std::string_view> content_length;
  std::optional<std::string> last_coding;
  bool has_transfer_encoding = false;
  for (const auto& field : fields) {
    if (iequals(field.name, "connection")) {
      for_each_element(field.value, [&](std::string_view token) {
        connection_tokens.push_back(ascii::lower(token));
      });
    } else if (iequals(field.name, "content-length")) {
      bool valid = true;
      bool any = false;
      for_each_element(field.value, [&](std::string_view length) {
        any = true;
        if (length.size() > 18 || !std::all_of(length.begin(), length.end(), is_digit) ||
            (content_length && *content_length != length)) {
          valid = false;
        }
        content_length = length;
      });
      if (!valid || !any) return reject("invalid Content-Length");
    } else if (iequals(field.name, "transfer-encoding")) {
      has_transfer_encoding = true;
      for_each_element(field.value,
                       [&](std::string_view coding) { last_coding = ascii::lower(coding); });
    }
  }
  if (has_transfer_encoding) {
    if (content_length) return reject("both Content-Length and Transfer-Encoding");
    if (version == "HTTP/1.0") return reject("Transfer-Encoding in an HTTP/1.0 request");
    if (last_coding != "chunked") return reject("Transfer-Encoding must end with chunked");
  }

  ProxyRequest request;
  request.kind = ProxyRequest::Kind::kForward;
  request.method = std::move(method);
  request.host = std::move(authority->host);
  request.port = authority->port.value_or(kDefaultHttpPort);

  std::string& out = request.upstream_head;
  out.reserve(256);
  out.append(request.method).append(" ");
  if (path.empty() || path.front() == '?') out.append("/");
  out.append(path).append(" ").append(version).append("\r\n");
  out.append("Host: ").append(request.host.authority_text());
  if (authority->port && *authority->port != kDefaultHttpPort) {
    out.append(":").append(std::to_string(*authority->port));
  }
  out.append("\r\n");
  for (const auto& field : fields) {
    if (hop_by_hop(field.name)) continue;
    auto name = ascii::lower(field.name);
    bool framing = name == "content-length" || name == "transfer-encoding";
    if (!framing && std::find(connection_tokens.begin(), connection_tokens.end(), name) !=
                        connection_tokens.end()) {
      continue;
    }
    out.append(field.name).append(": ").append(field.value).append("\r\n");
  }
  out.append("Connection: close\r\n\r\n");
  return request;
}

}  // namespace

std::variant<ProxyRequest, RequestRejection> parse_proxy_request(std::string_view head) {
  if (!head.ends_with("\r\n\r\n")) return reject("incomplete request head");
  for (std::size_t i = 0; i < head.size(); ++i) {
    char c = head[i];
    if (c == '\0') return reject("NUL in request head");
    if (c == '\n' && (i == 0 || head[i - 1] != '\r')) return reject("bare LF in request head");
    if (c == '\r' && (i + 1 == head.size() || head[i + 1] != '\n')) {
      return reject("bare CR in request head");
    }
  }
  // Every line, the request line included, now ends with CRLF; the last CRLF is the empty line.
  std::string_view rest = head.substr(0, head.size() - 2);
  auto next_line = [&rest] {
    auto end = rest.find("\r\n");
    auto line = rest.substr(0, end);
    rest.remove_prefix(end + 2);
    return line;
  };

  std::string_view request_line = next_line();
  auto sp1 = request_line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos) {
    return reject("malformed request line");
  }
  auto method = request_line.substr(0, sp1);
  auto target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  auto version = request_line.substr(sp2 + 1);
  if (!is_token(method)) return reject("malformed request method");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
      })) {
    return reject("malformed request target");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    bool looks_like_version = version.size() == 8 && version.starts_with("HTTP/") &&
                              is_digit(version[5]) && version[6] == '.' && is_digit(version[7]);
    if (looks_like_version) return reject("only HTTP/1.0 and HTTP/1.1 are supported", 505);
    return reject("malformed HTTP version");
  }

  std::vector<Field> fields;
  while (!rest.empty()) {
    std::string_view line = next_line();
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      return reject("obsolete line folding in a header field");
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      return reject("malformed header field");
    }
    auto value = ascii::trim(line.substr(colon + 1));
    if (!valid_field_value(value)) return reject("control character in a header field");
    fields.push_back(Field{line.substr(0, colon), value});
  }

  if (method == "CONNECT") {
    auto authority = parse_authority(target);
    if (!authority) return reject("CONNECT target: " + authority.error().message);
    if (!authority->port) return reject("CONNECT target needs a port, as in host:443");
    ProxyRequest request;
    request.kind = ProxyRequest::Kind::kConnect;
    request.method = std::string(method);
    request.host = std::move(authority->host);
    request.port = *authority->port;
    return request;
  }
  return parse_forward(std::string(method), target, version, fields);
}

}  // namespace hearth::egress
