#pragma once
/// `default` insertion (Schema::apply_defaults), done on the schema document itself: valijson
/// does not keep `default`. Internal to src/schema/.

#include "json/json.hpp"

namespace hearth::schema::detail {

/// Inserts into `instance` the defaults `schema` declares, the way ajv's useDefaults does:
///  - for an object instance, every property of `properties` that the object lacks and whose
///    schema has a `default` (its own, or that of the type its `$ref` names) gets a copy of it;
///    present properties are never overwritten and are descended into;
///  - `$ref`s (resolved inside `document`, the compiled document with `types` at its root) and
///    every `allOf` branch are followed;
///  - array items are descended into through `items` (one schema or a tuple).
/// anyOf / oneOf / if-then-else are not followed: which branch applies is not known up front.
void apply_defaults(const json::value& document, const json::value& schema, json::value& instance);

}  // namespace hearth::schema::detail
