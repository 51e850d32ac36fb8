#include "schema/schema_walk.hpp"

#include <array>
#include <charconv>

#include "common/ascii.hpp"
#include "common/problem.hpp"

namespace hearth::schema::detail {
namespace {

// Draft-07 applicators, by the shape of their value.
constexpr std::array kSingleSchemaKeywords = {"additionalItems",
                                              "additionalProperties",
                                              "contains",
                                              "propertyNames",
                                              "if",
                                              "then",
                                              "else",
                                              "not"};
constexpr std::array kSchemaArrayKeywords = {"allOf", "anyOf", "oneOf"};
constexpr std::array kSchemaMapKeywords = {"properties", "patternProperties", "definitions"};

bool is_schema_shape(const json::value& v) {
  return v.is_object() || v.is_bool();
}

// Decodes one reference token: ~1 -> '/', ~0 -> '~' (in that order, per RFC 6901), and the
// %-escapes a URI fragment may carry (RFC 3986), as valijson does when it resolves the same $ref.
std::optional<std::string> decode_token(std::string_view raw) {
  std::string unescaped;
  unescaped.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '~') {
      unescaped += raw[i];
      continue;
    }
    if (i + 1 >= raw.size() || (raw[i + 1] != '0' && raw[i + 1] != '1')) return std::nullopt;
    unescaped += raw[i + 1] == '1' ? '/' : '~';
    ++i;
  }
  std::string out;
  out.reserve(unescaped.size());
  for (std::size_t i = 0; i < unescaped.size(); ++i) {
    if (unescaped[i] != '%') {
      out += unescaped[i];
      continue;
    }
    if (i + 2 >= unescaped.size()) return std::nullopt;
    const int hi = ascii::hex_value(unescaped[i + 1]);
    const int lo = ascii::hex_value(unescaped[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// An array index token: digits only, no leading zero (RFC 6901).
std::optional<std::size_t> array_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return index;
}

}  // namespace

void for_each_subschema(const json::value& schema, const std::string& path,
                        const std::function<void(const json::value&, const std::string&)>& visit) {
  const json::object* obj = schema.if_object();
  if (obj == nullptr) return;
  for (const char* keyword : kSingleSchemaKeywords) {
    if (const json::value* v = obj->if_contains(keyword); v != nullptr && is_schema_shape(*v)) {
      visit(*v, join_path(path, keyword));
    }
  }
  for (const char* keyword : kSchemaArrayKeywords) {
    const json::value* v = obj->if_contains(keyword);
    if (v == nullptr || !v->is_array()) continue;
    const std::string base = join_path(path, keyword);
    const json::array& branches = v->get_array();
    for (std::size_t i = 0; i < branches.size(); ++i) {
      if (is_schema_shape(branches[i])) visit(branches[i], index_path(base, i));
    }
  }
  for (const char* keyword : kSchemaMapKeywords) {
    const json::value* v = obj->if_contains(keyword);
    if (v == nullptr || !v->is_object()) continue;
    const std::string base = join_path(path, keyword);
    for (const auto& member : v->get_object()) {
      if (is_schema_shape(member.value())) visit(member.value(), join_path(base, member.key()));
    }
  }
  if (const json::value* items = obj->if_contains("items"); items != nullptr) {
    const std::string base = join_path(path, "items");
    if (is_schema_shape(*items)) {
      visit(*items, base);
    } else if (items->is_array()) {
      const json::array& list = items->get_array();
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (is_schema_shape(list[i])) visit(list[i], index_path(base, i));
      }
    }
  }
  // dependencies values are either schemas or arrays of property names; only the former nest.
  if (const json::value* deps = obj->if_contains("dependencies");
      deps != nullptr && deps->is_object()) {
    const std::string base = join_path(path, "dependencies");
    for (const auto& member : deps->get_object()) {
      if (is_schema_shape(member.value())) visit(member.value(), join_path(base, member.key()));
    }
  }
}

std::optional<std::vector<std::string>> parse_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  std::size_t start = 1;
  while (true) {
    const std::size_t slash = pointer.find('/', start);
    const std::string_view raw = pointer.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    std::optional<std::string> token = decode_token(raw);
    if (!token) return std::nullopt;
    tokens.push_back(std::move(*token));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return tokens;
}

const json::value* resolve_pointer(const json::value& root,
                                   const std::vector<std::string>& tokens) {
  const json::value* node = &root;
  for (const std::string& token : tokens) {
    if (const json::object* obj = node->if_object(); obj != nullptr) {
      node = obj->if_contains(token);
    } else if (const json::array* arr = node->if_array(); arr != nullptr) {
      const std::optional<std::size_t> index = array_index(token);
      node = index && *index < arr->size() ? &(*arr)[*index] : nullptr;
    } else {
      node = nullptr;
    }
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::string pointer_path(const json::value& root, const std::vector<std::string>& tokens) {
  std::string path;
  const json::value* node = &root;
  for (const std::string& token : tokens) {
    const std::optional<std::size_t> index =
        node != nullptr && node->is_array() ? array_index(token) : std::nullopt;
    path = index ? index_path(path, *index) : join_path(path, token);
    node = node != nullptr ? resolve_pointer(*node, {token}) : nullptr;
  }
  return path;
}

}  // namespace hearth::schema::detail
