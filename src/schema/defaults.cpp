#include "schema/defaults.hpp"

#include <string>

#include "schema/schema_walk.hpp"

namespace hearth::schema::detail {
namespace {

/// `$ref` hops allowed without moving down the instance. Chains in real manifests are short;
/// the limit only stops reference cycles such as {"$ref": "#"}.
constexpr int kMaxRefHops = 32;

/// The schema a `$ref` inside `document` designates, or nullptr (remote or dangling: the
/// compiler has refused those already, so nullptr only happens for unusual pointers).
const json::value* follow_ref(const json::value& document, const json::value& schema) {
  const json::value* ref = json::member(schema, "$ref");
  if (ref == nullptr || !ref->is_string()) return nullptr;
  const std::string_view text = ref->get_string();
  if (text.empty() || text.front() != '#') return nullptr;
  const auto tokens = parse_pointer(text.substr(1));
  return tokens ? resolve_pointer(document, *tokens) : nullptr;
}

/// The `default` a property schema declares, through `$ref` chains.
const json::value* default_of(const json::value& document, const json::value& schema) {
  const json::value* node = &schema;
  for (int hop = 0; node != nullptr && hop <= kMaxRefHops; ++hop) {
    if (json::member(*node, "$ref") == nullptr) return json::member(*node, "default");
    node = follow_ref(document, *node);
  }
  return nullptr;
}

class DefaultsApplier {
 public:
  explicit DefaultsApplier(const json::value& document) : document_(document) {}

  void apply(const json::value& schema, json::value& instance, int hops) {
    if (!schema.is_object() || hops > kMaxRefHops) return;
    // Draft-07 ignores the siblings of `$ref`, and so does validation: follow the reference only.
    if (json::member(schema, "$ref") != nullptr) {
      if (const json::value* target = follow_ref(document_, schema)) {
        apply(*target, instance, hops + 1);
      }
      return;
    }
    if (const json::value* all_of = json::member(schema, "allOf"); all_of && all_of->is_array()) {
      for (const json::value& branch : all_of->get_array()) apply(branch, instance, hops + 1);
    }
    if (json::object* object = instance.if_object()) {
      apply_to_object(schema, *object);
    } else if (json::array* array = instance.if_array()) {
      apply_to_array(schema, *array);
    }
  }

 private:
  void apply_to_object(const json::value& schema, json::object& object) {
    const json::value* properties = json::member(schema, "properties");
    if (properties == nullptr || !properties->is_object()) return;
    for (const auto& property : properties->get_object()) {
      if (json::value* present = object.if_contains(property.key())) {
        apply(property.value(), *present, 0);
      } else if (const json::value* value = default_of(document_, property.value())) {
        object.emplace(property.key(), *value);  // a copy, in the instance's storage
      }
    }
  }

  void apply_to_array(const json::value& schema, json::array& array) {
    const json::value* items = json::member(schema, "items");
    if (items == nullptr) return;
    if (items->is_object()) {
      for (json::value& item : array) apply(*items, item, 0);
    } else if (const json::array* tuple = items->if_array()) {
      for (std::size_t i = 0; i < tuple->size() && i < array.size(); ++i) {
        apply((*tuple)[i], array[i], 0);
      }
    }
  }

  const json::value& document_;
};

}  // namespace

void apply_defaults(const json::value& document, const json::value& schema, json::value& instance) {
  DefaultsApplier(document).apply(schema, instance, 0);
}

}  // namespace hearth::schema::detail
