// hearth's JSON writer (json.hpp says what it writes). Self-contained: Boost.JSON and the
// standard library only, so that hearth-js-worker compiles it in too (src/js/CMakeLists.txt).

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "json/json.hpp"

namespace hearth::json {

namespace {

constexpr char kHex[] = "0123456789abcdef";

/// What a byte of a string becomes: 0 as it is, 'u' as \u00xx, any other letter after a
/// backslash. Boost.JSON 1.81's table (serializer.ipp), so that strings are written as before.
constexpr std::array<char, 256> kEscape = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();

/// True when one of the 8 bytes of `w` is below 0x20, a quote or a backslash (exact for "any":
/// the byte-wise tests below have no false positives as a whole, Hacker's Delight 6-1).
bool has_special(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t slash = w ^ (kOnes * '\\');
  const std::uint64_t below = (w - kOnes * 0x20) & ~w;
  const std::uint64_t is_quote = (quote - kOnes) & ~quote;
  const std::uint64_t is_slash = (slash - kOnes) & ~slash;
  return ((below | is_quote | is_slash) & kHigh) != 0;
}

void append_integer(std::string& out, auto i) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}

// Below 2^53 a double holds every integer: an integral value is written as one, exactly. From
// 2^53 on every double is integral but most integers are not doubles, so the value is written
// with an exponent: it reads back as the same double, never as a 64-bit integer (of other digits
// than the double's, which would change json::canonical's text and the hashes made from it).
constexpr double kTwo53 = 9007199254740992.0;

void write_value(std::string& out, const value& v);

void write_object(std::string& out, const object& o) {
  out.push_back('{');
  bool first = true;
  for (const auto& kv : o) {
    if (!first) out.push_back(',');
    first = false;
    serialize_string_to(out, kv.key());
    out.push_back(':');
    write_value(out, kv.value());
  }
  out.push_back('}');
}

void write_array(std::string& out, const array& a) {
  out.push_back('[');
  bool first = true;
  for (const auto& item : a) {
    if (!first) out.push_back(',');
    first = false;
    write_value(out, item);
  }
  out.push_back(']');
}

void write_value(std::string& out, const value& v) {
  switch (v.kind()) {
    case kind::null:
      out.append("null", 4);
      return;
    case kind::bool_:
      if (v.get_bool()) {
        out.append("true", 4);
      } else {
        out.append("false", 5);
      }
      return;
    case kind::int64:
      append_integer(out, v.get_int64());
      return;
    case kind::uint64:
      append_integer(out, v.get_uint64());
      return;
    case kind::double_:
      serialize_number_to(out, v.get_double());
      return;
    case kind::string:
      serialize_string_to(out, v.get_string());
      return;
    case kind::array:
      write_array(out, v.get_array());
      return;
    case kind::object:
      write_object(out, v.get_object());
      return;
  }
}

}  // namespace

void serialize_string_to(std::string& out, string_view s) {
  out.push_back('"');
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p != end) {
    const char* const run = p;
    while (end - p >= 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, p, sizeof w);
      if (has_special(w)) break;
      p += 8;
    }
    while (p != end && kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    out.append(run, static_cast<std::size_t>(p - run));
    if (p == end) break;
    const auto c = static_cast<unsigned char>(*p++);
    const char e = kEscape[c];
    if (e == 'u') {
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, sizeof u);
    } else {
      const char b[2] = {'\\', e};
      out.append(b, sizeof b);
    }
  }
  out.push_back('"');
}

void serialize_number_to(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out.append("null", 4);
    return;
  }
  if (std::fabs(d) < kTwo53 && std::trunc(d) == d) {
    // -0.0 included: written as 0.
    append_integer(out, static_cast<std::int64_t>(d));
    return;
  }
  // The shortest digits that read back as `d`, as [-]D[.DDD]e(+|-)XX.
  char sci[32];
  const auto r = std::to_chars(sci, sci + sizeof sci, d, std::chars_format::scientific);
  const char* p = sci;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[20];
  int k = 0;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  ++p;  // 'e'
  const bool negative_exponent = *p == '-';
  int exponent = 0;
  std::from_chars(p + 1, r.ptr, exponent);
  if (negative_exponent) exponent = -exponent;
  // ECMA-262 Number::toString's layout: the value is 0.DIGITS x 10^n, with k digits.
  const int n = exponent + 1;
  char buf[48];
  char* o = buf;
  if (negative) *o++ = '-';
  if (0 < n && std::fabs(d) < kTwo53) {
    // Not integral (those were written above), so k > n.
    o = std::copy(digits, digits + n, o);
    *o++ = '.';
    o = std::copy(digits + n, digits + k, o);
  } else if (-6 < n && n <= 0) {
    *o++ = '0';
    *o++ = '.';
    o = std::fill_n(o, -n, '0');
    o = std::copy(digits, digits + k, o);
  } else {
    *o++ = digits[0];
    if (k > 1) {
      *o++ = '.';
      o = std::copy(digits + 1, digits + k, o);
    }
    *o++ = 'e';
    *o++ = n - 1 < 0 ? '-' : '+';
    o = std::to_chars(o, buf + sizeof buf, n - 1 < 0 ? 1 - n : n - 1).ptr;
  }
  out.append(buf, o);
}

void serialize_to(std::string& out, const value& v) {
  write_value(out, v);
}

std::string serialize(const value& v) {
  std::string out;
  write_value(out, v);
  return out;
}

std::string serialize(const object& o) {
  std::string out;
  write_object(out, o);
  return out;
}

std::string serialize(const array& a) {
  std::string out;
  write_array(out, a);
  return out;
}

std::string serialize(const string& s) {
  std::string out;
  serialize_string_to(out, s);
  return out;
}

std::string serialize(string_view s) {
  std::string out;
  serialize_string_to(out, s);
  return out;
}

std::string dump(const value& v) {
  return json::serialize(v);
}

}  // namespace hearth::json
