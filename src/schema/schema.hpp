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
struct Violation {
  std::string field;       ///< instance location as a path: "" (root), "text", "items[2].id"
  std::string constraint;  ///< the JSON Schema keyword that failed: "required", "type", "minimum", ...
  std::string message;     ///< plain sentence, e.g. "'text' is required"
};

/// A compiled schema. Immutable and safe to use from many threads at once.
class Schema {
 public:
  virtual ~Schema() = default;

  /// Every violation of `instance`; empty when it matches.
  virtual std::vector<Violation> validate(const json::value& instance) const = 0;

  /// Inserts `default` values of absent object properties, following properties, $ref to types and
  /// allOf, into objects that are present in `instance` (the way ajv's useDefaults does).
  virtual void apply_defaults(json::value& instance) const = 0;
};

/// Compiles schemas. `types` is the manifest's `types` object: a `$ref` of the form `#/types/Name`
/// resolves to types[Name], also from inside other types.
class Compiler {
 public:
  virtual ~Compiler() = default;

  /// The compiled schema, or the problems found, with paths relative to the schema root
  /// (e.g. "items.$ref": "'#/types/Foo' does not name a type in 'types'").
  virtual std::shared_ptr<const Schema> compile(const json::value& schema, const json::object& types,
                                                Problems& problems) const = 0;
};

/// The draft-07 compiler.
std::unique_ptr<Compiler> make_draft7_compiler();

}  // namespace hearth::schema
