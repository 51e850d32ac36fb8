#include "agentapp/bridge/capability.hpp"

#include <algorithm>

namespace hearth::agentapp {

const json::value* CallContext::param(std::string_view key) const {
  return call.params.is_object() ? call.params.get_object().if_contains(key) : nullptr;
}

Result<std::string> CallContext::string_param(std::string_view key) const {
  const auto* v = param(key);
  if (v == nullptr || !v->is_string() || v->get_string().empty()) {
    return Error::make(ErrorCode::kInvalidParams, call.capability + "." + call.method +
                                                      ": params." + std::string(key) +
                                                      " must be a non-empty string");
  }
  return std::string(v->get_string());
}

const Capability::Method* Capability::method(std::string_view name) const {
  const auto& all = methods();
  const auto it =
      std::find_if(all.begin(), all.end(), [name](const Method& m) { return m.name == name; });
  return it == all.end() ? nullptr : &*it;
}

void CapabilityRegistry::add(std::unique_ptr<Capability> capability) {
  std::string name(capability->name());
  capabilities_[std::move(name)] = std::move(capability);
  // What capability/list and readiness show: names in order, so the answer does not depend on
  // the order of registration.
  provided_.clear();
  for (const auto& [key, registered] : capabilities_) {
    std::vector<std::string_view> names;
    for (const auto& m : registered->methods()) names.push_back(m.name);
    std::sort(names.begin(), names.end());
    json::array listed;
    for (const auto n : names) listed.emplace_back(n);
    provided_[key] = std::move(listed);
  }
}

const Capability* CapabilityRegistry::find(std::string_view name) const {
  const auto it = capabilities_.find(name);
  return it == capabilities_.end() ? nullptr : it->second.get();
}

}  // namespace hearth::agentapp
