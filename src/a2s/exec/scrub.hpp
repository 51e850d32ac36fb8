#pragma once
/// Scrubber: removes vault values from everything an A2S call returns (response bodies and
/// headers, error texts, audit lines), so a secret that a service echoes back never leaves the
/// daemon. Each secret is replaced by "[redacted:NAME]" in the forms it can take on the wire:
/// as written, percent-encoded, form-encoded, JSON-escaped and base64 (Basic credentials).

#include <string>
#include <string_view>
#include <vector>

#include "json/json.hpp"

namespace hearth::a2s {

class Scrubber {
 public:
  /// Values shorter than this are not searched for: replacing every "1" or "ab" would mangle
  /// answers while hiding nothing a guess would not find. docs/a2s.md says so.
  static constexpr std::size_t kMinLength = 4;

  void add(std::string_view secret, std::string_view name);
  bool empty() const { return needles_.empty(); }

  std::string apply(std::string_view text) const;
  /// Every string (keys included) of a JSON value, recursively.
  json::value apply_json(const json::value& value) const;

 private:
  struct Needle {
    std::string text;
    std::string replacement;
  };
  std::vector<Needle>
      needles_;  ///< longest first, so a longer form is replaced before a part of it
};

}  // namespace hearth::a2s
