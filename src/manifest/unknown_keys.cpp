// Unknown members of a lavs.json: the LAVS manifest's shape (spec section 4), level by level,
// and the handler members each kind declares (Kind::keys()).
#include <array>

#include "common/suggest.hpp"
#include "manifest/manifest.hpp"

namespace hearth::manifest {

namespace {

constexpr std::array<std::string_view, 9> kManifestKeys{"$schema", "lavs",        "name",
                                                        "version", "description", "endpoints",
                                                        "view",    "types",       "permissions"};
constexpr std::array<std::string_view, 6> kEndpointKeys{"id",      "method", "description",
                                                        "handler", "schema", "permissions"};
constexpr std::array<std::string_view, 2> kSchemaKeys{"input", "output"};
constexpr std::array<std::string_view, 4> kPermissionKeys{"fileAccess", "networkAccess",
                                                          "maxExecutionTime", "maxMemory"};
constexpr std::array<std::string_view, 4> kViewKeys{"component", "fallback", "icon", "theme"};

/// The members of a view component of `type` besides `type` (spec section 4.5).
std::vector<std::string_view> component_keys(std::string_view type) {
  if (type == "cdn") return {"url", "exportName"};
  if (type == "npm") return {"package", "version", "exportName"};
  if (type == "local") return {"path"};
  if (type == "inline") return {"code"};
  return {};
}

class UnknownKeys {
 public:
  explicit UnknownKeys(const HandlerKinds& kinds) : kinds_(kinds) {}

  /// Reports the members of `obj` (at `path`) that are not in `known`.
  template <typename Keys>
  void check(const json::object& obj, const std::string& path, const Keys& known) {
    for (const auto& member : obj) {
      const std::string_view key = member.key();
      if (key.starts_with("x-") || key == "$schema") continue;
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string message = "unknown key '" + std::string(key) + "'";
      if (auto near = closest_word(key, known)) message += "; did you mean '" + *near + "'?";
      message += " (it is ignored)";
      found_.push_back({join_path(path, key), std::move(message)});
    }
  }

  void manifest(const json::object& obj) {
    check(obj, "", kManifestKeys);
    if (const auto* p = obj.if_contains("permissions"); p != nullptr && p->is_object()) {
      check(p->get_object(), "permissions", kPermissionKeys);
    }
    if (const auto* v = obj.if_contains("view"); v != nullptr && v->is_object()) {
      view(v->get_object(), "view");
    }
    if (const auto* e = obj.if_contains("endpoints"); e != nullptr && e->is_array()) {
      const auto& endpoints = e->get_array();
      for (std::size_t i = 0; i < endpoints.size(); ++i) {
        if (endpoints[i].is_object()) {
          endpoint(endpoints[i].get_object(), index_path("endpoints", i));
        }
      }
    }
  }

  Problems take() { return std::move(found_); }

 private:
  void view(const json::object& obj, const std::string& path) {
    check(obj, path, kViewKeys);
    const auto* c = obj.if_contains("component");
    if (c == nullptr || !c->is_object()) return;
    const auto* type = c->get_object().if_contains("type");
    if (type == nullptr || !type->is_string()) return;
    auto keys = component_keys(type->get_string());
    if (keys.empty()) return;  // an unknown type is a problem of its own
    keys.emplace_back("type");
    check(c->get_object(), join_path(path, "component"), keys);
  }

  void endpoint(const json::object& obj, const std::string& path) {
    check(obj, path, kEndpointKeys);
    if (const auto* p = obj.if_contains("permissions"); p != nullptr && p->is_object()) {
      check(p->get_object(), join_path(path, "permissions"), kPermissionKeys);
    }
    if (const auto* s = obj.if_contains("schema"); s != nullptr && s->is_object()) {
      check(s->get_object(), join_path(path, "schema"), kSchemaKeys);
    }
    if (const auto* h = obj.if_contains("handler"); h != nullptr && h->is_object()) {
      const auto* type = h->get_object().if_contains("type");
      if (type == nullptr || !type->is_string()) return;
      auto keys = kinds_.handler_keys(type->get_string());
      if (keys.empty()) return;
      keys.emplace_back("type");
      check(h->get_object(), join_path(path, "handler"), keys);
    }
  }

  const HandlerKinds& kinds_;
  Problems found_;
};

}  // namespace

Problems unknown_keys(const json::value& doc, const HandlerKinds& kinds) {
  if (!doc.is_object()) return {};
  UnknownKeys pass(kinds);
  pass.manifest(doc.get_object());
  return pass.take();
}

}  // namespace hearth::manifest
