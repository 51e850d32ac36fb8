#include "agentapp/bridge/capability.hpp"

namespace hearth::agentapp {

std::shared_ptr<const CapabilityRegistry> make_builtin_capabilities() {
  auto registry = std::make_shared<CapabilityRegistry>();
  registry->add(make_storage_capability());
  registry->add(make_artifacts_capability());
  registry->add(make_evidence_capability());
  // Agent tasks run through the App Server (agentSession/*), which checks this capability.
  registry->add(make_agent_capability());
  return registry;
}

}  // namespace hearth::agentapp
