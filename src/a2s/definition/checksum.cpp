// The checksum of a definition (docs/a2s.md, "Checksum"): SHA-256 over json::canonical of the
// definition without its top-level checksum.
#include "a2s/definition/definition.hpp"
#include "common/sha256.hpp"

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
  return sha256_hex(canonical_form(document));
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
