// hearth's JSON writer (json.hpp says what it writes). Self-contained: Boost.JSON and the
// standard library only, so that hearth-js-worker compiles it in too (src/jsworker/CMakeLists.txt).

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/// True when one of the 8 bytes of `w` is below 0x20, a quote or a backslash: the has-zero-byte
/// and has-byte-less-than tricks, exact about whether there is one (not about where), which is all
/// this needs. Where SSE2 is missing, and for the tail of 8 to 15 bytes.
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

/// Powers of ten a double holds exactly.
constexpr double kPow10[] = {1, 10, 100, 1000, 10000};

/// Numbers as people write them (42.5, 19.99, 0.125) without std::to_chars, which takes most of a
/// double's time: when m / 10^k is `d` for an integer m of at most 15 digits and
/// the smallest such k (up to 4), the decimal m x 10^-k is the shortest that reads back as `d`
/// (any decimal of at most 15 digits reads back as a double that gives it back, DBL_DIG, so no
/// other of as few digits reads back as `d`). False, writing nothing, when there is none.
/// `d` is not integral and 1e-3 <= |d| < 2^53.
bool append_few_decimals(std::string& out, double d) {
  for (int k = 1; k <= 4; ++k) {
    const double scaled = d * kPow10[k];
    if (std::fabs(scaled) >= 1e15) return false;  // and so for every larger k
    // Exact below 2^50: no rounding in the + 0.5, and the conversion truncates.
    const double m =
        static_cast<double>(static_cast<std::int64_t>(scaled + (scaled < 0 ? -0.5 : 0.5)));
    // If m / 10^k reads back as `d`, `scaled` is within a unit in the last place of m (2^-52
    // relative; 2^-50 leaves room): most doubles are turned away here, before the division.
    if (std::fabs(scaled - m) > std::fabs(scaled) * 0x1p-50) continue;
    if (m / kPow10[k] != d) continue;
    // |m| has more than k digits unless |d| < 1: then "0." and the zeros after the point.
    char digits[24];
    const char* const last =
        std::to_chars(digits, digits + sizeof digits, static_cast<std::int64_t>(std::fabs(m))).ptr;
    const auto count = static_cast<int>(last - digits);
    char buf[32];
    char* o = buf;
    if (d < 0) *o++ = '-';
    if (count > k) {
      o = std::copy(digits, digits + (count - k), o);
      *o++ = '.';
      o = std::copy(digits + (count - k), digits + count, o);
    } else {
      *o++ = '0';
      *o++ = '.';
      o = std::fill_n(o, k - count, '0');
      o = std::copy(digits, digits + count, o);
    }
    out.append(buf, o);
    return true;
  }
  return false;
}

void write_value(std::string& out, const value& v);

std::size_t digits_of(std::uint64_t u) {
  std::size_t n = 1;
  for (; u >= 10; u /= 10) ++n;
  return n;
}

std::size_t estimate(const value& v);

std::size_t estimate_object(const object& o) {
  std::size_t n = 2 + o.size();  // braces, commas and colons
  for (const auto& kv : o) n += kv.key().size() + 3 + estimate(kv.value());
  return n;
}

std::size_t estimate_array(const array& a) {
  std::size_t n = 2 + a.size();
  for (const auto& item : a) n += estimate(item);
  return n;
}

/// Characters the text of `v` takes, give or take: exact but for a double (its longest form) and
/// a string's escapes (not counted). Reserving it costs one walk of the tree and saves the string's
/// growth, which on a large document (copies, and fresh pages to fault in at every doubling) took
/// most of the time.
std::size_t estimate(const value& v) {
  switch (v.kind()) {
    case kind::null:
      return 4;
    case kind::bool_:
      return 5;
    case kind::int64: {
      const std::int64_t i = v.get_int64();
      return i < 0 ? 1 + digits_of(0 - static_cast<std::uint64_t>(i))
                   : digits_of(static_cast<std::uint64_t>(i));
    }
    case kind::uint64:
      return digits_of(v.get_uint64());
    case kind::double_:
      return 24;  // -1.2345678901234567e-308
    case kind::string:
      return v.get_string().size() + 2;
    case kind::array:
      return estimate_array(v.get_array());
    case kind::object:
      return estimate_object(v.get_object());
  }
  return 0;
}

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
#if defined(__SSE2__)
    // 16 bytes at a time, as Boost.JSON does: a quote, a backslash or a byte below 0x20.
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmpeq_epi8(_mm_min_epu8(v, control), v));
      const int mask = _mm_movemask_epi8(hit);
      if (mask != 0) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p += 16;
    }
#endif
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
  const double magnitude = std::fabs(d);
  if (magnitude < kTwo53 && std::trunc(d) == d) {
    // -0.0 included: written as 0.
    append_integer(out, static_cast<std::int64_t>(d));
    return;
  }
  if (magnitude >= 1e-3 && magnitude < kTwo53) {
    if (append_few_decimals(out, d)) return;
    // Here std::to_chars's shortest form is fixed notation, which is JavaScript's: scientific
    // is never shorter from 1e-3 up (a tie goes to fixed), and no integral value comes here.
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
    return;
  }
  // Below 1e-3, or from 2^53 on: the shortest digits that read back as `d`, as
  // [-]D[.DDD]e(+|-)XX, laid out as JavaScript does (0.000001 from 1e-6 up, then 1e-7), but for
  // the exponent from 2^53 on (see kTwo53).
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
  if (-6 < n && n <= 0) {
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
  out.reserve(estimate(v));
  write_value(out, v);
  return out;
}

std::string serialize(const object& o) {
  std::string out;
  out.reserve(estimate_object(o));
  write_object(out, o);
  return out;
}

std::string serialize(const array& a) {
  std::string out;
  out.reserve(estimate_array(a));
  write_array(out, a);
  return out;
}

std::string serialize(const string& s) {
  return json::serialize(string_view(s));
}

std::string serialize(string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  serialize_string_to(out, s);
  return out;
}

std::string dump(const value& v) {
  return json::serialize(v);
}

}  // namespace hearth::json
