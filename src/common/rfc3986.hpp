#pragma once
/// The character classes of URI syntax (RFC 3986): one definition for everything that checks,
/// splits or encodes URLs.

#include <optional>
#include <string>
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

/// Decodes %XX escapes (and '+' as a space when `plus_is_space`: query components); nullopt for
/// a malformed escape.
inline std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = ascii::hex_value(in[i + 1]);
      const int lo = ascii::hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

}  // namespace hearth::rfc3986
