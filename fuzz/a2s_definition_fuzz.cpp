// A2S service definitions: YAML read into JSON and validated. Nothing may crash or loop; a
// document that loads must keep its checksum through YAML and back.
#include <cstdlib>
#include <string_view>

#include "a2s/definition/definition.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = hearth::a2s::yaml_to_json(text);
  if (!doc.ok()) return 0;
  hearth::Problems problems;
  (void)hearth::a2s::parse_definition(doc.value(), problems);
  (void)hearth::a2s::checksum_of(doc.value());
  auto again = hearth::a2s::yaml_to_json(hearth::a2s::json_to_yaml(doc.value()));
  if (!again.ok()) std::abort();
  if (hearth::a2s::checksum_of(again.value()) != hearth::a2s::checksum_of(doc.value()))
    std::abort();
  return 0;
}
