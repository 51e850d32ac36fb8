#pragma once
/// Host names and authorities as the egress components compare them.
///
/// Every spelling of one host maps to one canonical `Host`: names are lower-cased and lose a
/// trailing dot, IPv4 literals must be strict dotted quads, IPv6 literals are rewritten to the
/// form inet_ntop gives. Anything else is an error value, never a guess: in particular a name
/// whose last label is numeric ("127.1", "2130706433", "0x7f.1") is refused, because the system
/// resolver would read it as an IPv4 address that no allow-list entry names. Pure functions, no
/// I/O, no exceptions.
///
/// Also the rule both egress paths (the proxy of jailed handlers, and http handlers in the daemon)
/// apply after resolving an allowed name: addresses that lead back to this machine are refused
/// unless the allow-list asked for the local host by name (`localhost`) or by address.

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace hearth::egress {

/// A host in canonical form. Two spellings of one host give equal values.
struct Host {
  enum class Kind : std::uint8_t { kName, kIPv4, kIPv6 };
  Kind kind = Kind::kName;
  /// Lower-case name without trailing dot, dotted quad, or IPv6 text without brackets.
  std::string text;

  /// `text` as written in a URL authority or a Host header (IPv6 in brackets).
  std::string authority_text() const;
  /// True for IPv4 and IPv6 literals.
  bool is_address() const { return kind != Kind::kName; }

  bool operator==(const Host&) const = default;
};

/// A host with the port when one was written.
struct Authority {
  Host host;
  std::optional<std::uint16_t> port;
};

/// Parses a host name, a dotted-quad IPv4 literal, or an IPv6 literal with or without brackets
/// (no zone id). Names: labels of 1-63 characters from [A-Za-z0-9_-], 253 characters at most,
/// one optional trailing dot. Errors are ErrorCode::kInvalidParams with a message saying why.
Result<Host> parse_host(std::string_view text);

/// Parses "host", "host:port", "[v6]" and "[v6]:port". The port is decimal, 1-65535. An IPv6
/// literal must be in brackets here, since "::1:80" is ambiguous.
Result<Authority> parse_authority(std::string_view text);

/// Addresses that lead back to the daemon's own host (or nowhere useful): loopback, 0.0.0.0/8
/// ("this host": connect() reaches loopback), link-local (cloud metadata services), multicast,
/// reserved and broadcast, and the IPv4-mapped forms of all these. A name allowed by a
/// networkAccess list that resolves to one of them must not become a way around the network
/// namespace, or to services listening on the daemon's loopback.
bool is_local_address(const boost::asio::ip::address& address);

/// Addresses of private networks: RFC 1918 (10/8, 172.16/12, 192.168/16), shared address space
/// (100.64/10, RFC 6598), IPv6 unique-local (fc00::/7) and site-local (fec0::/10), and their
/// IPv4-mapped forms. Reachable from this machine but not from the internet: a URL a caller
/// chooses (a model server a run names) must not make the daemon fetch from them.
bool is_private_address(const boost::asio::ip::address& address);

/// Names that are loopback by definition (RFC 6761: `localhost` and `*.localhost`), so listing one
/// asks for the local host and its addresses are not refused.
bool is_localhost_name(const Host& host);

/// Bounded, printable copy of untrusted text for messages and logs (no CR/LF injection).
std::string printable(std::string_view text, std::size_t max = 255);

}  // namespace hearth::egress
