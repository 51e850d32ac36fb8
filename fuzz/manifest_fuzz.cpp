// The manifest loader on any document, with a stand-in for the handler kinds (each kind's own
// checks have unit tests; here the loader's own walk of the document is fuzzed).
#include <memory>
#include <string_view>

#include "json/json.hpp"
#include "manifest/manifest.hpp"
#include "schema/schema.hpp"

namespace {
class AnyKind final : public hearth::manifest::HandlerKinds {
 public:
  std::shared_ptr<const hearth::manifest::HandlerConfig> parse(
      std::string_view type, const hearth::json::object&, const std::string& path,
      hearth::Problems& problems) const override {
    if (type != "script" && type != "function") {
      problems.push_back({path + ".type", "unknown handler type"});
      return nullptr;
    }
    return std::make_shared<hearth::manifest::HandlerConfig>();
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto compiler = hearth::schema::make_draft7_compiler();
  static const AnyKind kinds;
  auto doc = hearth::json::parse_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                      hearth::json::ParseLimits{.clamp_numbers = true});
  if (!doc.ok()) return 0;
  hearth::Problems problems;
  (void)hearth::manifest::load_document(*doc, "/nonexistent/service", kinds, *compiler, problems);
  return 0;
}
