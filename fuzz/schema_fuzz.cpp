// Schema compile and validate, patterns included: the input is a schema, then (after a NUL) an
// instance. Compiling must never throw; validating must end (bounded time and stack).
#include <string_view>

#include "json/json.hpp"
#include "schema/schema.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto compiler = hearth::schema::make_draft7_compiler();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto nul = text.find('\0');
  auto schema = hearth::json::parse_text(text.substr(0, nul));
  if (!schema.ok()) return 0;
  hearth::Problems problems;
  hearth::json::object types;
  if (const auto* t = hearth::json::member(*schema, "types"); t != nullptr && t->is_object())
    types = t->get_object();
  auto compiled = compiler->compile(*schema, types, problems);
  if (!compiled || nul == std::string_view::npos) return 0;
  auto instance = hearth::json::parse_text(text.substr(nul + 1));
  if (!instance.ok()) return 0;
  (void)compiled->validate(*instance);
  compiled->apply_defaults(*instance);
  (void)compiled->validate(*instance);
  return 0;
}
