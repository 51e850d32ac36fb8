// The bounded JSON reader: strict (parse_text) and JSON-RPC message (parse_message) modes. A
// value that parses must serialise to JSON that parses again (not always to an equal value:
// Boost.JSON 1.81 does not round every long decimal mantissa correctly, so a double may move by
// one unit in the last place; found by this target, see docs/security.md).
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "json/json.hpp"

namespace {
bool all_finite(const hearth::json::value& v) {
  if (v.is_double()) return std::isfinite(v.get_double());
  if (v.is_array()) {
    for (const auto& item : v.get_array())
      if (!all_finite(item)) return false;
  }
  if (v.is_object()) {
    for (const auto& member : v.get_object())
      if (!all_finite(member.value())) return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto strict = hearth::json::parse_text(text);
  if (strict.ok()) {
    auto again = hearth::json::parse_text(hearth::json::dump(*strict));
    if (!again.ok()) std::abort();
  }
  std::vector<hearth::json::RawNumber> raw;
  auto message = hearth::json::parse_message(text, {}, raw);
  if (strict.ok() && !message.ok()) std::abort();
  auto clamped = hearth::json::parse_text(text, hearth::json::ParseLimits{.clamp_numbers = true});
  // No mode ever holds a number that would be written as Infinity.
  if (clamped.ok() && !all_finite(*clamped)) std::abort();
  if (strict.ok() && !all_finite(*strict)) std::abort();
  return 0;
}
