#include <set>

#include "handlers/handler.hpp"

namespace hearth::handlers {

void Registry::add(std::unique_ptr<Kind> kind) {
  std::string name(kind->name());
  unsupported_.erase(name);
  kinds_[std::move(name)] = std::move(kind);
}

void Registry::add_unsupported(std::string name, std::string reason) {
  if (kinds_.find(name) != kinds_.end()) return;  // a kind that runs wins over a refusal
  unsupported_[std::move(name)] = std::move(reason);
}

const Kind* Registry::find(std::string_view name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const manifest::HandlerConfig> Registry::parse(std::string_view type,
                                                               const json::object& handler,
                                                               const std::string& path,
                                                               Problems& problems) const {
  if (const Kind* kind = find(type)) return kind->parse(handler, path, problems);
  const std::string type_path = join_path(path, "type");
  if (auto it = unsupported_.find(type); it != unsupported_.end()) {
    problems.push_back({type_path, it->second});
    return nullptr;
  }
  // Every name the spec or this build knows, sorted, so the message is stable.
  std::set<std::string_view> known;
  for (const auto& [name, kind] : kinds_) known.insert(name);
  for (const auto& [name, reason] : unsupported_) known.insert(name);
  std::string list;
  for (auto name : known) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  problems.push_back(
      {type_path, "unknown handler type '" + std::string(type) + "' (known: " + list + ")"});
  return nullptr;
}

std::vector<std::string_view> Registry::handler_keys(std::string_view type) const {
  const Kind* kind = find(type);
  return kind != nullptr ? kind->keys() : std::vector<std::string_view>{};
}

bool Registry::ready() const {
  for (const auto& [name, kind] : kinds_) {
    if (kind && !kind->ready()) return false;
  }
  return true;
}

void Registry::shutdown() {
  for (auto& [name, kind] : kinds_) kind->shutdown();
}

void Registry::release(const std::filesystem::path& service_dir) {
  for (auto& [name, kind] : kinds_) kind->release(service_dir);
}

}  // namespace hearth::handlers
