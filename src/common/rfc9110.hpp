#pragma once
/// HTTP tokens (RFC 9110 5.6.2): methods and header field names, for the client that sends them
/// and the egress proxy that checks them.

#include <string_view>

#include "common/ascii.hpp"

namespace hearth::rfc9110 {

/// tchar: the characters of a token (a method, a header field's name).
constexpr bool is_tchar(char c) {
  return ascii::is_alnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// token = 1*tchar
constexpr bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

}  // namespace hearth::rfc9110
