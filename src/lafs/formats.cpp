#include "lafs/formats.hpp"

#include <array>
#include <string>

#include "common/ascii.hpp"
#include "common/rfc3986.hpp"
#include "common/utf8.hpp"

namespace hearth::lafs {

namespace {

using ascii::is_digit;
using ascii::is_hex_digit;

int two_digits(std::string_view s, std::size_t at) {
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

bool leap_year(int y) {
  return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

// full-date: dddd-dd-dd with a real day of the month.
bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!is_digit(s[i])) return false;
  }
  const int year = two_digits(s, 0) * 100 + two_digits(s, 2);
  const int month = two_digits(s, 5);
  const int day = two_digits(s, 8);
  static constexpr std::array<int, 13> kDays = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= (month == 2 && leap_year(year) ? 29 : kDays[static_cast<std::size_t>(month)]);
}

// hh:mm:ss[.frac] then z, or +hh, +hhmm, +hh:mm (required: the strict time-zone variant).
bool is_time(std::string_view s) {
  if (s.size() < 8 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' || !is_digit(s[3]) ||
      !is_digit(s[4]) || s[5] != ':' || !is_digit(s[6]) || !is_digit(s[7])) {
    return false;
  }
  const int hr = two_digits(s, 0);
  const int min = two_digits(s, 3);
  double sec = two_digits(s, 6);
  std::size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    std::size_t start = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
    // Only "< 60" and "< 61" are asked of the seconds: any fraction keeps 59.x below 60.
    sec += 0.5;
  }
  if (i == s.size()) return false;  // the time zone is required
  int tz_sign = 1, tz_h = 0, tz_m = 0;
  if (s[i] == 'z' || s[i] == 'Z') {
    ++i;
  } else if (s[i] == '+' || s[i] == '-') {
    tz_sign = s[i] == '-' ? -1 : 1;
    ++i;
    if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return false;
    tz_h = two_digits(s, i);
    i += 2;
    if (i < s.size()) {
      if (s[i] == ':') ++i;
      if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return false;
      tz_m = two_digits(s, i);
      i += 2;
    }
  } else {
    return false;
  }
  if (i != s.size()) return false;
  if (tz_h > 23 || tz_m > 59) return false;
  if (hr <= 23 && min <= 59 && sec < 60) return true;
  // A leap second is 23:59:60 in UTC, whatever the local offset.
  const int utc_min = min - tz_m * tz_sign;
  const int utc_hr = hr - tz_h * tz_sign - (utc_min < 0 ? 1 : 0);
  return (utc_hr == 23 || utc_hr == -1) && (utc_min == 59 || utc_min == -1) && sec < 61;
}

// --- URI (RFC 3986) ---

bool unreserved_or_sub_delim(char c) {
  return rfc3986::is_unreserved(c) || rfc3986::is_sub_delim(c);
}

// Every character of `s` is in the class (plus the extra characters), or a %XX escape.
bool all_of_class(std::string_view s, std::string_view extra) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || !is_hex_digit(s[i + 1]) || !is_hex_digit(s[i + 2])) return false;
      i += 2;
      continue;
    }
    if (!unreserved_or_sub_delim(c) && extra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool is_pchars_and_slashes(std::string_view s) {
  return all_of_class(s, ":@/");
}

bool is_dec_octet(std::string_view s) {
  if (s.empty() || s.size() > 3) return false;
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  if (s.size() < 3) return true;
  if (s[0] == '0' || s[0] == '1') return true;
  if (s[0] != '2') return false;
  if (s[1] >= '0' && s[1] <= '4') return true;
  return s[1] == '5' && s[2] <= '5';
}

bool is_ipv4(std::string_view s) {
  int parts = 0;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!is_dec_octet(part)) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts == 4;
}

bool is_h16(std::string_view s) {
  if (s.empty() || s.size() > 4) return false;
  for (char c : s) {
    if (!is_hex_digit(c)) return false;
  }
  return true;
}

// The pieces of one side of "::" (or of the whole address): h16 groups, an IPv4 address allowed
// as the last piece when `ipv4_last` (it counts as two).
bool ipv6_side(std::string_view s, bool ipv4_last, int& count) {
  count = 0;
  if (s.empty()) return true;
  std::size_t start = 0;
  while (true) {
    std::size_t colon = s.find(':', start);
    std::string_view piece =
        s.substr(start, colon == std::string_view::npos ? s.npos : colon - start);
    if (colon == std::string_view::npos) {
      if (is_h16(piece)) {
        count += 1;
      } else if (ipv4_last && is_ipv4(piece)) {
        count += 2;
      } else {
        return false;
      }
      return true;
    }
    if (!is_h16(piece)) return false;
    count += 1;
    start = colon + 1;
  }
}

bool is_ipv6(std::string_view s) {
  const std::size_t dc = s.find("::");
  if (dc == std::string_view::npos) {
    int n = 0;
    return ipv6_side(s, true, n) && n == 8;
  }
  if (s.find("::", dc + 1) != std::string_view::npos) return false;
  int before = 0, after = 0;
  if (!ipv6_side(s.substr(0, dc), false, before)) return false;
  if (!ipv6_side(s.substr(dc + 2), true, after)) return false;
  return before + after <= 7;
}

bool is_ipvfuture(std::string_view s) {
  if (s.size() < 4 || (s[0] != 'v' && s[0] != 'V')) return false;
  std::size_t i = 1;
  while (i < s.size() && is_hex_digit(s[i])) ++i;
  if (i == 1 || i >= s.size() || s[i] != '.') return false;
  ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!unreserved_or_sub_delim(s[i]) && s[i] != ':') return false;
  }
  return true;
}

// authority = [userinfo "@"] host [":" *DIGIT]
bool is_authority(std::string_view s) {
  if (std::size_t at = s.find('@'); at != std::string_view::npos) {
    if (!all_of_class(s.substr(0, at), ":")) return false;
    s = s.substr(at + 1);
  }
  std::string_view port;
  if (!s.empty() && s[0] == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view literal = s.substr(1, close - 1);
    if (!is_ipv6(literal) && !is_ipvfuture(literal)) return false;
    s = s.substr(close + 1);
    if (!s.empty()) {
      if (s[0] != ':') return false;
      port = s.substr(1);
    }
  } else {
    const std::size_t colon = s.find(':');
    if (!all_of_class(s.substr(0, colon), "")) return false;  // reg-name (an IPv4 is one too)
    if (colon != std::string_view::npos) port = s.substr(colon + 1);
  }
  for (char c : port) {
    if (!is_digit(c)) return false;
  }
  return true;
}

// "/" or "//", then authority and a path of "/"-led segments.
bool authority_form(std::string_view rest) {
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  return is_authority(authority) && is_pchars_and_slashes(path);
}

bool is_hier_part(std::string_view h) {
  if (h.empty()) return false;
  if (h[0] == '/') {
    // path-absolute: "/" [ segment-nz *( "/" segment ) ]
    if (h.size() == 1 || (h[1] != '/' && is_pchars_and_slashes(h.substr(1)))) return true;
    if (authority_form(h.substr(1))) return true;
    return h.size() >= 2 && h[1] == '/' && authority_form(h.substr(2));
  }
  // path-rootless: segment-nz *( "/" segment )
  return is_pchars_and_slashes(h);
}

}  // namespace

bool is_date_time(std::string_view s) {
  // Split at every 't', 'T' or JavaScript white space; exactly two parts are allowed.
  std::size_t cuts = 0, cut = 0, width = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t at = i;
    const char32_t c = next_code_point(s, i);
    if (c == 't' || c == 'T' || is_js_space(c)) {
      if (++cuts > 1) return false;
      cut = at;
      width = i - at;
    }
  }
  if (cuts != 1) return false;
  return is_date(s.substr(0, cut)) && is_time(s.substr(cut + width));
}

bool is_uri(std::string_view s) {
  // scheme ":"
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || !rfc3986::is_scheme(s.substr(0, colon))) return false;
  std::string_view rest = s.substr(colon + 1);
  std::string_view fragment, query;
  bool has_fragment = false, has_query = false;
  if (std::size_t hash = rest.find('#'); hash != std::string_view::npos) {
    fragment = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
    has_fragment = true;
  }
  if (std::size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    has_query = true;
  }
  if (has_fragment && !all_of_class(fragment, ":@/?")) return false;
  if (has_query && !all_of_class(query, ":@/?")) return false;
  return is_hier_part(rest);
}

bool is_semver_triplet(std::string_view s) {
  int groups = 0;
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == start) return false;
    ++groups;
    if (i == s.size()) return groups == 3;
    if (s[i] != '.' || groups == 3) return false;
    ++i;
  }
}

std::size_t code_point_count(std::string_view utf8) {
  // Fast path: text that is valid UTF-8 (all Boost.JSON strings parsed from text are) has one
  // code point per byte that is not a continuation byte.
  std::size_t n = 0;
  bool ascii = true;
  for (char ch : utf8) {
    const auto b = static_cast<unsigned char>(ch);
    n += (b & 0xC0) != 0x80 ? 1 : 0;
    ascii = ascii && b < 0x80;
  }
  if (ascii) return n;
  std::size_t decoded = 0;
  for (std::size_t i = 0; i < utf8.size();) {
    next_code_point(utf8, i);
    ++decoded;
  }
  return decoded;
}

std::string truncate_code_points(std::string_view utf8, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t k = 0; k < n && i < utf8.size(); ++k) next_code_point(utf8, i);
  return std::string(utf8.substr(0, i));
}

char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  auto bits = [&](std::size_t k) {
    return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3F);
  };
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  if (b0 >= 0xC2 && b0 < 0xE0 && cont(1)) {
    char32_t c = ((b0 & 0x1F) << 6) | bits(1);
    i += 2;
    return c;
  }
  if (b0 >= 0xE0 && b0 < 0xF0 && cont(1) && cont(2)) {
    char32_t c = ((b0 & 0x0F) << 12) | (bits(1) << 6) | bits(2);
    if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {
      i += 3;
      return c;
    }
  }
  if (b0 >= 0xF0 && b0 < 0xF5 && cont(1) && cont(2) && cont(3)) {
    char32_t c = ((b0 & 0x07) << 18) | (bits(1) << 12) | (bits(2) << 6) | bits(3);
    if (c >= 0x10000 && c <= 0x10FFFF) {
      i += 4;
      return c;
    }
  }
  ++i;
  return 0xFFFD;
}

}  // namespace hearth::lafs
