#pragma once
/// Host names and authorities as the egress components compare them.
///
/// Every spelling of one host maps to one canonical `Host`: names are lower-cased and lose a
/// trailing dot, IPv4 literals must be strict dotted quads, IPv6 literals are rewritten to the
/// form inet_ntop gives. Anything else is an error value, never a guess: in particular a name
/// whose last label is numeric ("127.1", "2130706433", "0x7f.1") is refused, because the system
/// resolver would read it as an IPv4 address that no allow-list entry names. Pure functions, no
/// I/O, no exceptions.

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

/// Bounded, printable copy of untrusted text for messages and logs (no CR/LF injection).
std::string printable(std::string_view text, std::size_t max = 255);

}  // namespace hearth::egress
