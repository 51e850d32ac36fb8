#include "permissions/permissions.hpp"

namespace hearth::permissions {

Permissions Permissions::effective(const Permissions& service, const Permissions& endpoint) {
  Permissions out = service;
  if (endpoint.file_access) {
    out.file_access = endpoint.file_access;
  }
  if (endpoint.network_access) {
    out.network_access = endpoint.network_access;
  }
  if (endpoint.max_execution_time) {
    out.max_execution_time = endpoint.max_execution_time;
  }
  if (endpoint.max_memory) {
    out.max_memory = endpoint.max_memory;
  }
  return out;
}

json::object Permissions::to_json() const {
  json::object out;
  if (file_access) {
    json::array list;
    for (const auto& pattern : *file_access) {
      list.emplace_back(pattern);
    }
    out["fileAccess"] = std::move(list);
  }
  if (network_access) {
    out["networkAccess"] = network_access->to_json();
  }
  if (max_execution_time) {
    out["maxExecutionTime"] = max_execution_time->count();
  }
  if (max_memory) {
    out["maxMemory"] = *max_memory;
  }
  return out;
}

}  // namespace hearth::permissions
