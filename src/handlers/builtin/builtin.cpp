#include "handlers/builtin/builtin.hpp"

#include "handlers/a2s/a2s.hpp"
#include "handlers/function/function.hpp"
#include "handlers/http/http.hpp"
#include "handlers/mcp/mcp.hpp"
#include "handlers/script/script.hpp"

namespace hearth::handlers {

std::unique_ptr<Registry> make_builtin_registry(const KindOptions& options) {
  auto registry = std::make_unique<Registry>();
  registry->add(script::make_kind(options));
  registry->add(function::make_kind(options));
  registry->add(http::make_kind(options));
  registry->add(mcp::make_kind(options));
  registry->add(a2s::make_kind(options));
  // Every kind the spec defines runs; Registry::add_unsupported remains for kinds a build leaves
  // out (refused by name at load, with a reason, rather than as unknown types).
  return registry;
}

}  // namespace hearth::handlers
