#pragma once
/// Test-only entry points of the schema area. hearth itself never fetches schemas: a remote
/// `$ref` is a compile problem for make_draft7_compiler(). The JSON Schema test suite, though,
/// has cases whose `$ref`s name documents it ships (http://localhost:1234/...), and the
/// conformance test resolves those through this hook rather than hiding them.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "json/json.hpp"
#include "schema/schema.hpp"

namespace hearth::schema::testing {

/// Returns the document an absolute URI (without fragment) names, or nullopt when unknown.
using RemoteLoader = std::function<std::optional<json::value>(const std::string& uri)>;

/// A draft-07 compiler that resolves `$ref`s to other documents through `loader` instead of
/// refusing them. Everything else behaves exactly as make_draft7_compiler().
std::unique_ptr<Compiler> make_draft7_compiler_with_remotes(RemoteLoader loader);

}  // namespace hearth::schema::testing
