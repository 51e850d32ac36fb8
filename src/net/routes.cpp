#include "net/routes.hpp"

#include <algorithm>

namespace hearth::net {

namespace {
bool is_prefix_route(const Route& r) {
  return r.path.size() > 1 && r.path.back() == '/';
}
}  // namespace

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

Status Routes::add(Route route) {
  const auto refuse = [&](const std::string& why) {
    return Error::make(ErrorCode::kInvalidParams, "cannot route '" + route.path + "': " + why);
  };
  if (route.path.empty() || route.path.front() != '/') return refuse("a path starts with '/'");
  if (route.path == "/rpc" || route.path == "/ws" || route.path.starts_with("/rpc/") ||
      route.path.starts_with("/ws/")) {
    return refuse("JSON-RPC and the WebSocket are built into the server");
  }
  if (!route.handler) return refuse("no handler");
  if (route.methods.empty()) return refuse("no methods");
  for (const auto& r : routes_) {
    if (r.path == route.path) return refuse("already routed");
  }
  routes_.push_back(std::move(route));
  return {};
}

const Route* Routes::find(std::string_view path) const {
  const Route* best = nullptr;
  for (const auto& r : routes_) {
    if (r.path == path) return &r;
    if (is_prefix_route(r) && path.starts_with(r.path) &&
        (best == nullptr || r.path.size() > best->path.size())) {
      best = &r;
    }
  }
  return best;
}

bool accepts(const Route& route, std::string_view method) {
  for (const auto& m : route.methods) {
    if (m == method || (m == "GET" && method == "HEAD")) return true;
  }
  return false;
}

std::string allow_header(const Route& route) {
  std::string out;
  const auto add = [&out](std::string_view m) {
    if (out.find(m) != std::string::npos) return;
    if (!out.empty()) out += ", ";
    out += m;
  };
  for (const auto& m : route.methods) {
    add(m);
    if (m == "GET") add("HEAD");
  }
  add("OPTIONS");
  return out;
}

}  // namespace hearth::net
