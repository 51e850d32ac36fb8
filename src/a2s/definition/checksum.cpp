// The checksum of a definition (docs/a2s.md, "Checksum"): SHA-256 over a canonical JSON form.
#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "a2s/definition/definition.hpp"

namespace hearth::a2s {
namespace {

void canonical_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
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
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void canonical_number(double d, std::string& out) {
  if (std::floor(d) == d && std::fabs(d) < 9007199254740992.0) {
    out += std::to_string(static_cast<long long>(d));
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, ec == std::errc() ? end : buf);
}

void canonical(const json::value& v, std::string& out) {
  switch (v.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case json::kind::int64:
      out += std::to_string(v.get_int64());
      return;
    case json::kind::uint64:
      out += std::to_string(v.get_uint64());
      return;
    case json::kind::double_:
      canonical_number(v.get_double(), out);
      return;
    case json::kind::string:
      canonical_string(v.get_string(), out);
      return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out += ',';
        first = false;
        canonical(item, out);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      std::vector<const json::key_value_pair*> members;
      for (const auto& kv : v.get_object()) members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out += '{';
      bool first = true;
      for (const auto* kv : members) {
        if (!first) out += ',';
        first = false;
        canonical_string(kv->key(), out);
        out += ':';
        canonical(kv->value(), out);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string canonical_form(const json::value& document) {
  std::string out;
  if (document.is_object()) {
    json::object without = document.get_object();
    without.erase("checksum");
    canonical(json::value(std::move(without)), out);
  } else {
    canonical(document, out);
  }
  return out;
}

std::string checksum_of(const json::value& document) {
  const std::string text = canonical_form(document);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

json::value seal(const json::value& document) {
  if (!document.is_object()) return document;
  const std::string sum = checksum_of(document);
  json::object out;
  bool placed = false;
  for (const auto& [key, value] : document.get_object()) {
    if (key == "checksum") continue;
    out[key] = value;
    if (key == "version") {
      out["checksum"] = sum;
      placed = true;
    }
  }
  if (!placed) out["checksum"] = sum;
  return out;
}

}  // namespace hearth::a2s
