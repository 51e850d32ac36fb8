#pragma once
/// ASCII character classes and case folding for protocol text (header names, schemes, host
/// names, identifiers). Locale-independent, unlike <cctype>: the daemon's behaviour must not
/// depend on LANG, and bytes of UTF-8 text (>= 0x80) never count as letters, digits or spaces.
///
/// The predicates take char32_t so that they serve bytes (char, unsigned char) and decoded code
/// points alike; a negative char converts to a value far beyond ASCII and matches nothing.

#include <cstddef>
#include <string>
#include <string_view>

namespace hearth::ascii {

constexpr bool is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
constexpr bool is_upper(char32_t c) {
  return c >= 'A' && c <= 'Z';
}
constexpr bool is_lower(char32_t c) {
  return c >= 'a' && c <= 'z';
}
constexpr bool is_alpha(char32_t c) {
  return is_upper(c) || is_lower(c);
}
constexpr bool is_alnum(char32_t c) {
  return is_alpha(c) || is_digit(c);
}
constexpr bool is_hex_digit(char32_t c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
/// What the "C" locale's isspace accepts: space, \t, \n, \v, \f, \r.
constexpr bool is_space(char32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/// The value of a hexadecimal digit (either case), or -1.
constexpr int hex_value(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

constexpr char lower(char c) {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char upper(char c) {
  return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}
inline std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = upper(c);
  return out;
}

/// Equal but for the case of ASCII letters.
constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// `s` starts with `prefix`, but for the case of ASCII letters.
constexpr bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

/// HTTP's optional white space (RFC 9110 OWS): space and horizontal tab.
inline constexpr std::string_view kBlanks = " \t";

/// `s` without the characters of `chars` at either end (by default spaces and tabs).
constexpr std::string_view trim(std::string_view s, std::string_view chars = kBlanks) {
  const auto first = s.find_first_not_of(chars);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(chars);
  return s.substr(first, last - first + 1);
}

}  // namespace hearth::ascii
