// The LAFS envelope validator and conformance checks on any JSON value.
#include <string_view>

#include "json/json.hpp"
#include "lafs/conformance.hpp"
#include "lafs/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = hearth::json::parse_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                      hearth::json::ParseLimits{.max_depth = 256});
  if (!doc.ok()) return 0;
  (void)hearth::lafs::validate_envelope_schema(*doc);
  (void)hearth::lafs::validate_context_ledger_schema(*doc);
  (void)hearth::lafs::run_envelope_conformance(*doc);
  (void)hearth::lafs::run_flag_conformance(*doc);
  return 0;
}
