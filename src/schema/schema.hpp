#pragma once
/// hearth's JSON Schema interface. The engine behind it (valijson, draft-07, today) is replaceable:
/// nothing outside src/schema/ includes valijson.

#include <memory>
#include <string>
#include <vector>

#include "common/problem.hpp"
#include "json/json.hpp"

namespace hearth::schema {

/// One reason an instance does not match a schema.
///
/// For `required` (and property `dependencies`) the field is the missing property itself; for
/// `additionalProperties: false` it is the unexpected property. A subschema that fails without a
/// keyword to blame (a `false` schema, `propertyNames`) is reported at its place with the keyword
/// that led there ("properties", "items"), or with constraint "schema" at the root.
struct Violation {
  std::string field;  ///< instance location as a path: "" (root), "text", "items[2].id"
  std::string
      constraint;       ///< the JSON Schema keyword that failed: "required", "type", "minimum", ...
  std::string message;  ///< plain sentence, e.g. "'text' is required"
};

/// A compiled schema. Immutable and safe to use from many threads at once.
class Schema {
 public:
  virtual ~Schema() = default;

  /// Every violation of `instance`; empty when it matches. Reports that only say "something
  /// inside failed" are left out when the cause below them is reported; the order is the same
  /// on every call (causes before the anyOf/oneOf that summarise them). Never throws.
  virtual std::vector<Violation> validate(const json::value& instance) const = 0;

  /// Inserts `default` values of absent object properties, following properties, $ref to types and
  /// allOf, into objects that are present in `instance` (the way ajv's useDefaults does).
  virtual void apply_defaults(json::value& instance) const = 0;
};

/// Compiles schemas. `types` is the manifest's `types` object: a `$ref` of the form `#/types/Name`
/// resolves to types[Name], also from inside other types (recursion through properties or items
/// is fine). Other local pointers (`#/definitions/x`) resolve inside the schema itself.
class Compiler {
 public:
  virtual ~Compiler() = default;

  /// The compiled schema, or the problems found, with paths relative to the schema root
  /// (e.g. "items.$ref": "'#/types/Foo' does not name a type in 'types'"). Problems inside a type
  /// the schema uses have paths under "types.Name" ("types.Todo.properties.due.format"); types
  /// the schema does not use are not looked at. Problems are appended to `problems`; nullptr is
  /// returned when this call added any. Reported: keyword values the draft-07 meta-schema
  /// rejects, `$ref`s that resolve to nothing, `$ref`s to other documents (hearth never fetches;
  /// only the draft-07 meta-schema's own URI is known, built in), invalid regular expressions,
  /// and reference loops that would make validation endless ({"$ref": "#"} at the root).
  /// `$id` is ignored, and so is a member named `types` at the schema's root: `#/types/` always
  /// means the manifest's types. Never throws.
  virtual std::shared_ptr<const Schema> compile(const json::value& schema,
                                                const json::object& types,
                                                Problems& problems) const = 0;
};

/// The draft-07 compiler (valijson behind it). Formats checked: date, time, date-time; other
/// formats are annotations. See docs/conformance.md for what the engine does not support.
std::unique_ptr<Compiler> make_draft7_compiler();

}  // namespace hearth::schema
