#include "subsystems/a2a.hpp"

#include "subsystems/services.hpp"

namespace hearth::subsystems {

A2aAgent::A2aAgent(daemon::Context& context)
    : context_(context), host_(context.find<Services>().host()) {}

A2aAgent::~A2aAgent() = default;

Status A2aAgent::expose(daemon::Surface& surface) {
  a2a::Options options;
  options.version = HEARTH_VERSION;
  // The card's URLs: known once the daemon listens, before any request is served.
  options.base_url = [context = &context_] { return context->url(); };
  HEARTH_ASSIGN_OR_RETURN(
      agent_,
      a2a::add_routes(surface.routes(), host_, context_.io().get_executor(), std::move(options)));
  return {};
}

}  // namespace hearth::subsystems
