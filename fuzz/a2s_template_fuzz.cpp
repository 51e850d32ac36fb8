// A2S request templates: the input is a template, a NUL byte, then a value given to every
// placeholder. Whatever the value, a filled request keeps its shape: an origin-form target that
// does not start with "//", header values without CR, LF or NUL, and no Host header of its own.
#include <cstdlib>
#include <string_view>

#include "a2s/template/template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto split = input.find('\0');
  const auto text = input.substr(0, split);
  const auto value = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  auto parsed = hearth::a2s::parse_template(text);
  if (!parsed.ok()) return 0;
  const hearth::json::value v = hearth::json::string(value);
  const hearth::a2s::Lookup lookup = [&v](std::string_view) { return &v; };
  auto filled = hearth::a2s::fill(parsed.value(), lookup);
  if (!filled.ok()) return 0;
  const auto& target = filled->target;
  if (target.empty() || target[0] != '/' || (target.size() > 1 && target[1] == '/')) std::abort();
  if (target.find_first_of(" \r\n#") != std::string::npos) std::abort();
  for (const auto& [name, header] : filled->headers) {
    if (header.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) std::abort();
    if (name.size() == 4 && (name[0] | 0x20) == 'h' && (name[1] | 0x20) == 'o' &&
        (name[2] | 0x20) == 's' && (name[3] | 0x20) == 't') {
      std::abort();
    }
  }
  return 0;
}
