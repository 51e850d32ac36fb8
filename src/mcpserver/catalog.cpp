#include "mcpserver/catalog.hpp"

#include <functional>
#include <set>

#include "common/ascii.hpp"

namespace hearth::mcpserver {

namespace {

constexpr std::string_view kTypesPrefix = "#/types/";
constexpr std::size_t kMaxToolName = 128;

bool name_char(char c) {
  return ascii::is_alnum(c) || c == '_' || c == '-' || c == '.';
}

/// The type a `{"$ref": "#/types/Name"}` object names, or empty.
std::string type_ref(const json::value& v) {
  if (!v.is_object()) return {};
  const auto* ref = v.get_object().if_contains("$ref");
  if (ref == nullptr || !ref->is_string()) return {};
  std::string_view text = ref->get_string();
  if (!text.starts_with(kTypesPrefix)) return {};
  return std::string(text.substr(kTypesPrefix.size()));
}

/// Whether type `name` can reach itself through refs.
bool recursive_type(const std::string& name, const json::object& types) {
  std::set<std::string> seen;
  std::vector<std::string> todo{name};
  bool first = true;
  while (!todo.empty()) {
    std::string current = todo.back();
    todo.pop_back();
    if (!first && current == name) return true;
    first = false;
    if (!seen.insert(current).second) continue;
    const auto* type = types.if_contains(current);
    if (type == nullptr) continue;
    std::function<void(const json::value&)> walk = [&](const json::value& v) {
      if (auto ref = type_ref(v); !ref.empty()) {
        if (ref == name || !seen.contains(ref)) todo.push_back(ref);
      }
      if (v.is_object()) {
        for (const auto& [k, child] : v.get_object()) walk(child);
      } else if (v.is_array()) {
        for (const auto& child : v.get_array()) walk(child);
      }
    };
    walk(*type);
  }
  return false;
}

class Resolver {
 public:
  explicit Resolver(const json::object& types) : types_(types) {}

  json::value resolve(const json::value& v, std::size_t depth = 0) {
    if (depth > 64) return v;  // manifests are checked at load; this only bounds a pathological one
    if (auto ref = type_ref(v); !ref.empty()) {
      const auto* type = types_.if_contains(ref);
      if (type == nullptr) return v;
      if (recursive_type(ref, types_)) {
        if (!defs_.contains(ref)) {
          defs_[ref] = nullptr;  // placeholder first: the definition refers to itself
          defs_[ref] = resolve(*type, depth + 1);
        }
        json::object out = v.get_object();
        out["$ref"] = "#/$defs/" + ref;
        return out;
      }
      json::value inlined = resolve(*type, depth + 1);
      // Siblings of $ref (a description, say) are kept over the type's own.
      if (inlined.is_object() && v.get_object().size() > 1) {
        for (const auto& [k, child] : v.get_object()) {
          if (k != "$ref") inlined.get_object()[k] = resolve(child, depth + 1);
        }
      }
      return inlined;
    }
    if (v.is_object()) {
      json::object out;
      for (const auto& [k, child] : v.get_object()) out[k] = resolve(child, depth + 1);
      return out;
    }
    if (v.is_array()) {
      json::array out;
      for (const auto& child : v.get_array()) out.push_back(resolve(child, depth + 1));
      return out;
    }
    return v;
  }

  const json::object& defs() const { return defs_; }

 private:
  const json::object& types_;
  json::object defs_;
};

}  // namespace

std::string tool_name(std::string_view service, std::string_view endpoint, bool qualified) {
  std::string name =
      qualified ? std::string(service) + "." + std::string(endpoint) : std::string(endpoint);
  for (char& c : name) {
    if (!name_char(c)) c = '_';
  }
  if (name.size() > kMaxToolName) name.resize(kMaxToolName);
  if (name.empty()) name = "_";
  return name;
}

std::vector<NamedEndpoint> name_tools(const host::Host::ServiceList& services) {
  std::vector<NamedEndpoint> out;
  std::set<std::string> taken;
  const bool qualified = services.size() > 1;
  for (const auto& service : services) {
    const auto& m = service->manifest;
    for (const auto& endpoint : m.endpoints) {
      if (endpoint.method == manifest::Method::kSubscription) continue;
      const std::string base = tool_name(m.name, endpoint.id, qualified);
      std::string name = base;
      for (int n = 2; taken.contains(name); ++n) name = base + "_" + std::to_string(n);
      taken.insert(name);
      out.push_back(NamedEndpoint{service, &endpoint, std::move(name)});
    }
  }
  return out;
}

json::value resolve_types(const json::value& schema, const json::object& types) {
  Resolver resolver(types);
  json::value out = resolver.resolve(schema);
  if (!resolver.defs().empty() && out.is_object()) {
    json::object& o = out.get_object();
    json::object defs;
    if (const auto* existing = o.if_contains("$defs"); existing && existing->is_object()) {
      defs = existing->get_object();
    }
    for (const auto& [k, v] : resolver.defs()) defs[k] = v;
    o["$defs"] = std::move(defs);
  }
  return out;
}

json::value endpoint_schema(const manifest::Manifest& m, std::string_view endpoint,
                            std::string_view which) {
  const auto* endpoints = json::member(m.raw, "endpoints");
  if (endpoints == nullptr || !endpoints->is_array()) return nullptr;
  for (const auto& e : endpoints->get_array()) {
    const auto* id = json::member(e, "id");
    if (id == nullptr || !id->is_string() || id->get_string() != endpoint) continue;
    const auto* schema = json::member(e, "schema");
    if (schema == nullptr) return nullptr;
    const auto* part = json::member(*schema, which);
    return part == nullptr ? json::value(nullptr) : *part;
  }
  return nullptr;
}

bool is_object_schema(const json::value& schema) {
  const auto* type = json::member(schema, "type");
  return type != nullptr && type->is_string() && type->get_string() == "object";
}

bool wraps_input(const json::value& input_schema) {
  const auto* type = json::member(input_schema, "type");
  if (type == nullptr) return false;
  if (type->is_string()) return type->get_string() != "object";
  if (type->is_array()) {
    for (const auto& t : type->get_array()) {
      if (t.is_string() && t.get_string() == "object") return type->get_array().size() != 1;
    }
    return true;
  }
  return false;
}

ToolInput tool_input_schema(const manifest::Manifest& m, std::string_view endpoint) {
  ToolInput out;
  json::value input = endpoint_schema(m, endpoint, "input");
  if (!input.is_object()) {
    // No input schema: any object (tool arguments are always an object).
    out.schema = json::object{{"type", "object"}};
    return out;
  }
  input = resolve_types(input, m.types);
  out.wrapped = wraps_input(input);
  if (out.wrapped) {
    input = json::object{{"type", "object"},
                         {"properties", json::object{{"input", input}}},
                         {"required", json::array{"input"}}};
  } else if (!input.get_object().contains("type")) {
    input.get_object()["type"] = "object";
  }
  out.schema = std::move(input);
  return out;
}

json::object tool_definition(const manifest::Manifest& m, const manifest::Endpoint& endpoint,
                             const std::string& name, const std::string& ui_uri) {
  json::object tool;
  tool["name"] = name;
  tool["title"] = m.name + ": " + endpoint.id;
  tool["description"] =
      !endpoint.description.empty()
          ? endpoint.description
          : (endpoint.method == manifest::Method::kQuery ? "Query " : "Mutation ") + endpoint.id +
                " of " + m.name;
  tool["inputSchema"] = tool_input_schema(m, endpoint.id).schema;
  json::value output = endpoint_schema(m, endpoint.id, "output");
  if (output.is_object()) {
    output = resolve_types(output, m.types);
    if (is_object_schema(output)) {
      tool["outputSchema"] = std::move(output);
    } else {
      tool["outputSchema"] = json::object{{"type", "object"},
                                          {"properties", json::object{{"result", output}}},
                                          {"required", json::array{"result"}}};
    }
  }
  const bool query = endpoint.method == manifest::Method::kQuery;
  json::object annotations{
      {"title", m.name + ": " + endpoint.id}, {"readOnlyHint", query}, {"idempotentHint", query}};
  if (!query) annotations["destructiveHint"] = true;
  // What a handler reaches: an http or mcp handler, or networkAccess, reaches the world.
  const bool open_world =
      endpoint.handler_type == "http" || endpoint.handler_type == "mcp" ||
      endpoint.handler_type == "a2s" ||
      (endpoint.effective.network_access.has_value() &&
       endpoint.effective.network_access->mode() != egress::NetworkPolicy::Mode::kNone);
  annotations["openWorldHint"] = open_world;
  tool["annotations"] = std::move(annotations);
  if (!ui_uri.empty()) {
    tool["_meta"] = json::object{{"ui", json::object{{"resourceUri", ui_uri}}},
                                 {"hearth/service", m.name},
                                 {"hearth/endpoint", endpoint.id}};
  } else {
    tool["_meta"] = json::object{{"hearth/service", m.name}, {"hearth/endpoint", endpoint.id}};
  }
  return tool;
}

std::optional<Media> media_of(const json::value& output_schema) {
  const auto* o = output_schema.if_object();
  if (o == nullptr) return std::nullopt;
  const auto* type = o->if_contains("type");
  const auto* encoding = o->if_contains("contentEncoding");
  const auto* media = o->if_contains("contentMediaType");
  if (type == nullptr || *type != "string" || encoding == nullptr || *encoding != "base64" ||
      media == nullptr || !media->is_string()) {
    return std::nullopt;
  }
  const std::string mime(media->get_string());
  if (mime.starts_with("image/")) return Media{"image", mime};
  if (mime.starts_with("audio/")) return Media{"audio", mime};
  return std::nullopt;
}

json::object tool_result(const Result<json::value>& outcome, bool wrap,
                         const std::optional<Media>& media) {
  json::object result;
  if (!outcome.ok()) {
    const Error& e = outcome.error();
    std::string text = e.message;
    if (!e.data.is_null()) text += "\n" + json::dump(e.data);
    result["content"] = json::array{json::object{{"type", "text"}, {"text", text}}};
    result["isError"] = true;
    result["_meta"] = json::object{{"hearth/error", to_json(e)}};
    return result;
  }
  const json::value& value = outcome.value();
  json::value structured =
      wrap || !value.is_object() ? json::value(json::object{{"result", value}}) : value;
  if (media && value.is_string()) {
    result["content"] = json::array{
        json::object{{"type", media->kind}, {"data", value}, {"mimeType", media->mime_type}}};
  } else {
    result["content"] = json::array{json::object{{"type", "text"}, {"text", json::dump(value)}}};
  }
  result["structuredContent"] = std::move(structured);
  result["isError"] = false;
  return result;
}

std::string view_uri(std::string_view service) {
  return "ui://" + std::string(service) + "/view";
}

std::string subscription_uri(std::string_view service, std::string_view endpoint) {
  return "lavs://" + std::string(service) + "/subscriptions/" + std::string(endpoint);
}

namespace {

bool unreserved_path(char c) {
  return ascii::is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

std::optional<std::string> percent_decode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = hex(text[i + 1]);
    const int lo = hex(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (out.find('\0') != std::string::npos) return std::nullopt;
  return out;
}

}  // namespace

std::string file_uri(const std::string& absolute_path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : absolute_path) {
    if (unreserved_path(static_cast<char>(c))) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::optional<ResourceRef> parse_resource_uri(std::string_view uri) {
  ResourceRef ref;
  if (uri.starts_with("ui://")) {
    std::string_view rest = uri.substr(5);
    if (!rest.ends_with("/view")) return std::nullopt;
    ref.kind = ResourceRef::Kind::kView;
    ref.service = std::string(rest.substr(0, rest.size() - 5));
    if (ref.service.empty() || ref.service.find('/') != std::string::npos) return std::nullopt;
    return ref;
  }
  if (uri.starts_with("lavs://")) {
    std::string_view rest = uri.substr(7);
    const std::size_t slash = rest.find("/subscriptions/");
    if (slash == std::string_view::npos || slash == 0) return std::nullopt;
    ref.kind = ResourceRef::Kind::kSubscription;
    ref.service = std::string(rest.substr(0, slash));
    ref.endpoint = std::string(rest.substr(slash + 15));
    if (ref.endpoint.empty() || ref.endpoint.find('/') != std::string::npos) return std::nullopt;
    return ref;
  }
  if (uri.starts_with("file://")) {
    std::string_view rest = uri.substr(7);
    if (!rest.starts_with('/')) return std::nullopt;  // file://host/... is not a local file
    auto path = percent_decode(rest);
    if (!path) return std::nullopt;
    ref.kind = ResourceRef::Kind::kFile;
    ref.path = std::move(*path);
    return ref;
  }
  return std::nullopt;
}

}  // namespace hearth::mcpserver
