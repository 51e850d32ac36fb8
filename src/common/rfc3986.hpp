#pragma once
/// The character classes of URI syntax (RFC 3986): one definition for everything that checks,
/// splits or encodes URLs.

#include <string_view>

#include "common/ascii.hpp"

namespace hearth::rfc3986 {

/// unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"
constexpr bool is_unreserved(char c) {
  return ascii::is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/// sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
constexpr bool is_sub_delim(char c) {
  return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos;
}

/// pchar without pct-encoded: unreserved / sub-delims / ":" / "@"
constexpr bool is_pchar(char c) {
  return is_unreserved(c) || is_sub_delim(c) || c == ':' || c == '@';
}

/// scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ): the whole of `s`.
constexpr bool is_scheme(std::string_view s) {
  if (s.empty() || !ascii::is_alpha(s.front())) return false;
  for (char c : s) {
    if (!ascii::is_alnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace hearth::rfc3986
