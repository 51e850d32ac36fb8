#pragma once
/// Test-only entry points of the schema area. hearth itself never fetches schemas: a remote
/// `$ref` is a compile problem for make_draft7_compiler(). The JSON Schema test suite, though,
/// has cases whose `$ref`s name documents it ships (http://localhost:1234/...), and the
/// conformance test resolves those through this hook rather than hiding them.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json/json.hpp"
#include "schema/schema.hpp"

namespace hearth::schema::testing {

/// Returns the document an absolute URI (without fragment) names, or nullopt when unknown.
using RemoteLoader = std::function<std::optional<json::value>(const std::string& uri)>;

/// A draft-07 compiler that resolves `$ref`s to other documents through `loader` instead of
/// refusing them. Everything else behaves exactly as make_draft7_compiler().
std::unique_ptr<Compiler> make_draft7_compiler_with_remotes(RemoteLoader loader);

/// Problems and violations as one line each, for test failure messages.
inline std::string describe(const Problems& problems) {
  std::string out;
  for (const Problem& p : problems) out += "{" + p.to_string() + "} ";
  return out;
}

inline std::string describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const Violation& v : violations) {
    out += "{" + v.field + " | " + v.constraint + " | " + v.message + "} ";
  }
  return out;
}

}  // namespace hearth::schema::testing
