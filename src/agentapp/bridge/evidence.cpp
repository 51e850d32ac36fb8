// lime.evidence: the app's own entries in its evidence log, and the log exported with whether
// its chain verifies.
#include "agentapp/bridge/capability.hpp"

namespace hearth::agentapp {
namespace {

class EvidenceCapability final : public Capability {
 public:
  std::string_view name() const override { return "lime.evidence"; }

  const std::vector<Method>& methods() const override {
    static const std::vector<Method> kMethods = {{"record", {}}, {"export", {}}};
    return kMethods;
  }

  /// `record` appends the app's own entry, and `export` reads the chain: an entry of the call
  /// besides would only repeat the first, and lengthen the chain the second reads.
  bool recorded() const override { return false; }

  Result<json::value> invoke(CallContext& context) const override {
    if (context.call.method == "record") {
      HEARTH_ASSIGN_OR_RETURN(auto kind, context.string_param("kind"));
      const auto* detail = context.param("detail");
      static const json::object kNoDetail;
      // An app's own entries are marked as such: "app." before its kind.
      HEARTH_ASSIGN_OR_RETURN(
          auto entry,
          context.evidence.append("app." + kind, detail != nullptr && detail->is_object()
                                                     ? detail->get_object()
                                                     : kNoDetail));
      return json::value(std::move(entry));
    }
    const auto* after = context.param("after");
    HEARTH_ASSIGN_OR_RETURN(
        auto entries,
        context.evidence.entries(after != nullptr && after->is_int64() ? after->get_int64() : 0));
    const auto verified = context.evidence.verify();
    json::object exported{{"entries", std::move(entries)}, {"verified", verified.ok()}};
    if (!verified.ok()) exported["problem"] = verified.error().message;
    return json::value(std::move(exported));
  }
};

}  // namespace

std::unique_ptr<Capability> make_evidence_capability() {
  return std::make_unique<EvidenceCapability>();
}

}  // namespace hearth::agentapp
