#include "agentapp/package/jsv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "common/utf8.hpp"

namespace hearth::agentapp::jsv {

namespace {

const json::array& empty_array() {
  static const json::array kEmpty;
  return kEmpty;
}

/// The code point of the well-formed UTF-8 sequence at s[i] and its length.
std::pair<char32_t, std::size_t> code_point_at(std::string_view s, std::size_t i) {
  const auto b = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  if (c < 0xE0 && i + 1 < s.size()) return {((c & 0x1Fu) << 6) | (b(i + 1) & 0x3Fu), 2};
  if (c < 0xF0 && i + 2 < s.size()) {
    return {((c & 0x0Fu) << 12) | ((b(i + 1) & 0x3Fu) << 6) | (b(i + 2) & 0x3Fu), 3};
  }
  if (i + 3 < s.size()) {
    return {((c & 0x07u) << 18) | ((b(i + 1) & 0x3Fu) << 12) | ((b(i + 2) & 0x3Fu) << 6) |
                (b(i + 3) & 0x3Fu),
            4};
  }
  return {0xFFFD, 1};
}

void append_utf16(std::u16string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto [cp, len] = code_point_at(s, i);
    i += len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
}

void quote(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    // A surrogate half (ED A0..BF xx, never in well-formed UTF-8: see utf16_units).
    if (c == 0xED && i + 2 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0xA0) {
      const unsigned unit = 0xD000u | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                            (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
      i += 2;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void newline(std::string& out, int indent, int depth) {
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
}

void write(std::string& out, const json::value& v, int indent, int depth) {
  switch (v.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: {
      const double d = number(v);
      out += std::isfinite(d) ? number_to_string(d) : "null";
      return;
    }
    case json::kind::string:
      quote(out, v.get_string());
      return;
    case json::kind::array: {
      const auto& a = v.get_array();
      if (a.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& item : a) {
        if (!first) out += ',';
        first = false;
        if (indent > 0) newline(out, indent, depth + 1);
        write(out, item, indent, depth + 1);
      }
      if (indent > 0) newline(out, indent, depth);
      out += ']';
      return;
    }
    case json::kind::object: {
      const auto& o = v.get_object();
      const auto keys = own_keys(o);
      if (keys.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto key : keys) {
        if (!first) out += ',';
        first = false;
        if (indent > 0) newline(out, indent, depth + 1);
        quote(out, key);
        out += indent > 0 ? ": " : ":";
        write(out, o.at(key), indent, depth + 1);
      }
      if (indent > 0) newline(out, indent, depth);
      out += '}';
      return;
    }
  }
}

}  // namespace

bool truthy(const json::value* v) {
  if (v == nullptr) return false;
  switch (v->kind()) {
    case json::kind::null:
      return false;
    case json::kind::bool_:
      return v->get_bool();
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: {
      const double d = number(*v);
      return d != 0 && !std::isnan(d);
    }
    case json::kind::string:
      return !v->get_string().empty();
    default:
      return true;
  }
}

double number(const json::value& v) {
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return std::nan("");
}

std::string number_to_string(double d) {
  if (std::isnan(d)) return "NaN";
  if (d == 0) return "0";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  const std::string sign = d < 0 ? "-" : "";
  char buf[64];
  const auto res =
      std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  const std::string_view s(buf, static_cast<std::size_t>(res.ptr - buf));
  const auto e = s.find('e');
  std::string digits;
  for (const char c : s.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  const std::string_view exp_text = s.substr(e + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                  exp_text.data() + exp_text.size(), exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // the value is 0.digits x 10^n
  if (k <= n && n <= 21) return sign + digits + std::string(static_cast<std::size_t>(n - k), '0');
  if (0 < n && n <= 21) {
    return sign + digits.substr(0, static_cast<std::size_t>(n)) + "." +
           digits.substr(static_cast<std::size_t>(n));
  }
  if (-6 < n && n <= 0) {
    return sign + "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  }
  std::string mantissa = digits.substr(0, 1);
  if (k > 1) mantissa += "." + digits.substr(1);
  return sign + mantissa + "e" + (n - 1 >= 0 ? "+" : "-") + std::to_string(std::abs(n - 1));
}

std::string to_string(const json::value* v) {
  if (v == nullptr) return "undefined";
  switch (v->kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return v->get_bool() ? "true" : "false";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return number_to_string(number(*v));
    case json::kind::string:
      return std::string(v->get_string());
    case json::kind::array: {
      std::string out;
      bool first = true;
      for (const auto& item : v->get_array()) {
        if (!first) out += ',';
        first = false;
        if (!item.is_null()) out += to_string(&item);
      }
      return out;
    }
    case json::kind::object:
      return "[object Object]";
  }
  return {};
}

bool is_array_index(std::string_view key) {
  if (key.empty() || key.size() > 10) return false;
  if (key.size() > 1 && key.front() == '0') return false;
  std::uint64_t n = 0;
  for (const char c : key) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n < 4294967295u;
}

std::vector<std::string_view> own_keys(const json::object& o) {
  std::vector<std::string_view> indices;
  std::vector<std::string_view> keys;
  keys.reserve(o.size());
  for (const auto& member : o) {
    if (member.key() == kPrototypeKey) continue;
    (is_array_index(member.key()) ? indices : keys).push_back(member.key());
  }
  if (indices.empty()) return keys;
  std::sort(indices.begin(), indices.end(), [](std::string_view a, std::string_view b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  indices.insert(indices.end(), keys.begin(), keys.end());
  return indices;
}

const json::value* get(const json::value* base, std::string_view key) {
  if (base == nullptr || base->is_null()) {
    throw Thrown(std::string("Cannot read properties of ") +
                 (base == nullptr ? "undefined" : "null") + " (reading '" + std::string(key) +
                 "')");
  }
  // The prototype chain: each link was made by a later line of the file, so it ends.
  for (int depth = 0; base != nullptr && base->is_object() && depth < 10000; ++depth) {
    const auto& o = base->get_object();
    if (const auto* own = o.if_contains(key); own != nullptr && key != kPrototypeKey) return own;
    base = o.if_contains(kPrototypeKey);
  }
  return nullptr;
}

const json::value* get_opt(const json::value* base, std::string_view key) {
  if (base == nullptr || base->is_null()) return nullptr;
  return get(base, key);
}

bool is_array(const json::value* v) {
  return v != nullptr && v->is_array();
}
bool is_plain_object(const json::value* v) {
  return v != nullptr && v->is_object();
}

const json::array& as_array(const json::value* v) {
  return is_array(v) ? v->get_array() : empty_array();
}

bool includes(std::initializer_list<std::string_view> list, const json::value* v) {
  if (v == nullptr || !v->is_string()) return false;
  const std::string_view s = v->get_string();
  return std::find(list.begin(), list.end(), s) != list.end();
}

bool array_includes(const json::value* v, std::string_view s) {
  for (const auto& item : as_array(v)) {
    if (item.is_string() && item.get_string() == s) return true;
  }
  return false;
}

std::string stringify(const json::value& v, int indent) {
  std::string out;
  write(out, v, indent, 0);
  return out;
}

std::string decode_utf8(std::string_view in) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const auto c = static_cast<unsigned char>(in[i]);
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k < len && i + k < in.size(); ++k) {
      const auto b = static_cast<unsigned char>(in[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
    }
    if (k == len) {
      out.append(in.substr(i, len));
    } else {
      out += kReplacement;  // the maximal subpart; the byte that broke it is read again
    }
    i += k;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  std::size_t begin = 0;
  while (begin < s.size()) {
    const auto [cp, len] = code_point_at(s, begin);
    if (!is_js_space(cp)) break;
    begin += len;
  }
  std::size_t end = s.size();
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    const auto [cp, len] = code_point_at(s, start);
    if (!is_js_space(cp)) break;
    end = start;
  }
  return s.substr(begin, end - begin);
}

std::vector<json::value> utf16_units(std::string_view s) {
  std::u16string units;
  append_utf16(units, s);
  std::vector<json::value> out;
  out.reserve(units.size());
  for (const char16_t u : units) {
    std::string one;
    if (u < 0x80) {
      one += static_cast<char>(u);
    } else if (u < 0x800) {
      one += static_cast<char>(0xC0 | (u >> 6));
      one += static_cast<char>(0x80 | (u & 0x3F));
    } else {
      one += static_cast<char>(0xE0 | (u >> 12));
      one += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
      one += static_cast<char>(0x80 | (u & 0x3F));
    }
    out.emplace_back(json::string(one));
  }
  return out;
}

bool utf16_less(std::string_view a, std::string_view b) {
  std::u16string ua;
  std::u16string ub;
  append_utf16(ua, a);
  append_utf16(ub, b);
  return ua < ub;
}

}  // namespace hearth::agentapp::jsv
