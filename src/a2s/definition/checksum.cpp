// The checksum of a definition (docs/a2s.md, "Checksum"): SHA-256 over json::canonical of the
// definition without its top-level checksum.
#include <openssl/evp.h>

#include "a2s/definition/definition.hpp"

namespace hearth::a2s {

std::string canonical_form(const json::value& document) {
  if (document.is_object()) {
    json::object without = document.get_object();
    without.erase("checksum");
    return json::canonical(json::value(std::move(without)));
  }
  return json::canonical(document);
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
