// The bounded JSON reader: strict (parse_text) and JSON-RPC message (parse_message) modes, and
// the writer. A value that parses must serialise to JSON that parses again to the same numbers:
// written again it gives the same text and the same canonical form (an integral double may come
// back as an integer, which both write alike). Before hearth read doubles with std::from_chars,
// Boost.JSON 1.81 moved some by one unit in the last place (corpus/json/long-mantissa).
#include <cmath>
#include <cstdlib>
#include <string>
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
    const std::string written = hearth::json::serialize(*strict);
    auto again = hearth::json::parse_text(written);
    if (!again.ok()) std::abort();
    if (hearth::json::serialize(*again) != written) std::abort();
    if (hearth::json::canonical(*again) != hearth::json::canonical(*strict)) std::abort();
  }
  std::vector<hearth::json::RawNumber> raw;
  auto message = hearth::json::parse_message(text, {}, raw);
  if (strict.ok() && !message.ok()) std::abort();
  auto clamped = hearth::json::parse_text(text, hearth::json::ParseLimits{.clamp_numbers = true});
  // No mode ever holds a number that would be written as Infinity, and what the clamped mode
  // holds is written as JSON the strict mode reads.
  if (clamped.ok() && !all_finite(*clamped)) std::abort();
  if (clamped.ok() && !hearth::json::parse_text(hearth::json::serialize(*clamped)).ok()) {
    std::abort();
  }
  if (strict.ok() && !all_finite(*strict)) std::abort();
  return 0;
}
