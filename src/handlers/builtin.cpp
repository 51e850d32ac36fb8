#include "handlers/handler.hpp"
#include "handlers/function/function.hpp"
#include "handlers/script/script.hpp"

namespace hearth::handlers {

std::unique_ptr<Registry> make_builtin_registry(const KindOptions& options) {
  auto registry = std::make_unique<Registry>();
  registry->add(script::make_kind(options));
  registry->add(function::make_kind(options));
  // The spec's other kinds: refused by name at load, with a reason, rather than as unknown types.
  for (const char* name : {"http", "mcp"}) {
    registry->add_unsupported(name, std::string("the '") + name +
                                        "' handler kind is defined by the LAVS spec but this "
                                        "hearth build does not run it yet");
  }
  return registry;
}

}  // namespace hearth::handlers
