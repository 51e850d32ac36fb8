#include "egress/host.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>

#include "common/ascii.hpp"

namespace hearth::egress {
namespace {

constexpr std::size_t kMaxNameLength = 253;
constexpr std::size_t kMaxLabelLength = 63;

Error invalid(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

using ascii::is_digit;
using ascii::is_hex_digit;
using ascii::lower;

/// A label the system resolver would take for a number: decimal, or 0x-prefixed hexadecimal.
bool numeric_label(std::string_view label) {
  if (std::all_of(label.begin(), label.end(), is_digit)) return true;
  if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
    return std::all_of(label.begin() + 2, label.end(), is_hex_digit);
  }
  return false;
}

Result<Host> parse_ipv6(std::string_view text) {
  std::string copy(text);
  in6_addr address{};
  if (copy.find('%') != std::string::npos) return invalid("IPv6 zone ids are not allowed");
  if (inet_pton(AF_INET6, copy.c_str(), &address) != 1) return invalid("not a valid IPv6 address");
  char canonical[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, &address, canonical, sizeof canonical) == nullptr) {
    return invalid("not a valid IPv6 address");
  }
  return Host{Host::Kind::kIPv6, canonical};
}

Result<Host> parse_name(std::string_view text) {
  if (text.size() > kMaxNameLength) return invalid("host name longer than 253 characters");
  std::string name;
  name.reserve(text.size());
  std::size_t label_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '.') {
      std::size_t length = i - label_start;
      if (length == 0) return invalid("empty label in host name");
      if (length > kMaxLabelLength) return invalid("host name label longer than 63 characters");
      if (i < text.size()) name.push_back('.');
      label_start = i + 1;
      continue;
    }
    char c = lower(text[i]);
    if (!(is_digit(c) || ascii::is_lower(c) || c == '-' || c == '_')) {
      return invalid("character not allowed in a host name");
    }
    name.push_back(c);
  }
  auto last_dot = name.rfind('.');
  std::string_view last_label =
      std::string_view(name).substr(last_dot == std::string::npos ? 0 : last_dot + 1);
  if (numeric_label(last_label)) {
    return invalid("numeric host that is not a dotted-quad IPv4 address");
  }
  return Host{Host::Kind::kName, std::move(name)};
}

}  // namespace

std::string Host::authority_text() const {
  return kind == Kind::kIPv6 ? "[" + text + "]" : text;
}

Result<Host> parse_host(std::string_view text) {
  if (text.empty()) return invalid("empty host");
  if (text.front() == '[') {
    if (text.size() < 2 || text.back() != ']') return invalid("unterminated '[' in host");
    return parse_ipv6(text.substr(1, text.size() - 2));
  }
  if (text.find(':') != std::string_view::npos) return parse_ipv6(text);
  if (text.back() == '.') text.remove_suffix(1);
  if (text.empty()) return invalid("empty host");
  if (std::all_of(text.begin(), text.end(), [](char c) { return is_digit(c) || c == '.'; })) {
    std::string copy(text);
    in_addr address{};
    // glibc's inet_pton takes only four decimal parts without leading zeros: the strict form.
    if (inet_pton(AF_INET, copy.c_str(), &address) == 1) return Host{Host::Kind::kIPv4, copy};
  }
  return parse_name(text);
}

Result<Authority> parse_authority(std::string_view text) {
  std::string_view host_text = text;
  std::optional<std::string_view> port_text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) return invalid("unterminated '[' in host");
    host_text = text.substr(0, close + 1);
    auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return invalid("unexpected text after ']'");
      port_text = rest.substr(1);
    }
  } else if (auto colon = text.find(':'); colon != std::string_view::npos) {
    if (text.find(':', colon + 1) != std::string_view::npos) {
      return invalid("IPv6 addresses must be written in brackets, as in [::1]:443");
    }
    host_text = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  auto host = parse_host(host_text);
  if (!host) return std::move(host).error();
  Authority out{std::move(host).value(), std::nullopt};
  if (port_text) {
    if (port_text->empty() || port_text->size() > 5 ||
        !std::all_of(port_text->begin(), port_text->end(), is_digit)) {
      return invalid("port must be a number from 1 to 65535");
    }
    unsigned long value = 0;
    for (char c : *port_text) value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value == 0 || value > 65535) return invalid("port must be a number from 1 to 65535");
    out.port = static_cast<std::uint16_t>(value);
  }
  return out;
}

bool is_local_address(const boost::asio::ip::address& address) {
  if (address.is_v6()) {
    const auto v6 = address.to_v6();
    if (v6.is_v4_mapped()) {
      return is_local_address(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6));
    }
    return v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_multicast();
  }
  const std::uint32_t v4 = address.to_v4().to_uint();
  const std::uint32_t first = v4 >> 24;
  return first == 0               // 0.0.0.0/8: "this host"; connect() reaches loopback
         || first == 127          // loopback
         || (v4 >> 16) == 0xA9FE  // 169.254.0.0/16: link-local, cloud metadata services
         || (v4 >> 28) >= 0xE;    // 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, broadcast
}

bool is_private_address(const boost::asio::ip::address& address) {
  if (address.is_v6()) {
    const auto v6 = address.to_v6();
    if (v6.is_v4_mapped()) {
      return is_private_address(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6));
    }
    const auto bytes = v6.to_bytes();
    return (bytes[0] & 0xFE) == 0xFC                            // fc00::/7 unique-local
           || (bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0xC0);  // fec0::/10 site-local
  }
  const std::uint32_t v4 = address.to_v4().to_uint();
  return (v4 >> 24) == 10                  // 10.0.0.0/8
         || (v4 >> 20) == 0xAC1            // 172.16.0.0/12
         || (v4 >> 16) == 0xC0A8           // 192.168.0.0/16
         || (v4 >> 22) == (100 << 2 | 1);  // 100.64.0.0/10
}

bool is_localhost_name(const Host& host) {
  return host.kind == Host::Kind::kName &&
         (host.text == "localhost" || host.text.ends_with(".localhost"));
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (char c : text.substr(0, max)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace hearth::egress
