// lime.agent: provided, granted and checked like any capability, but run by the App Server
// (agentSession/*), not as a bridge call.
#include "agentapp/bridge/capability.hpp"

namespace hearth::agentapp {
namespace {

class AgentCapability final : public Capability {
 public:
  std::string_view name() const override { return "lime.agent"; }

  const std::vector<Method>& methods() const override {
    static const std::vector<Method> kMethods = {{"startTask", {}}};
    return kMethods;
  }

  Result<json::value> invoke(CallContext& context) const override {
    (void)context;
    return Error::make(ErrorCode::kMethodNotFound,
                       "lime.agent runs through the App Server: agentSession/start, then "
                       "agentSession/turn/start (docs/app-server.md)");
  }
};

}  // namespace

std::unique_ptr<Capability> make_agent_capability() {
  return std::make_unique<AgentCapability>();
}

}  // namespace hearth::agentapp
