#include "subsystems/views.hpp"

#include <spdlog/spdlog.h>

#include "httpclient/url.hpp"
#include "methods/view/view.hpp"
#include "subsystems/services.hpp"

namespace hearth::subsystems {
namespace fs = std::filesystem;

Views::Views(daemon::Context& context) : services_(context.find<Services>().host()) {
  const auto& options = context.options();
  options_.web_dir = options.web_dir.empty() ? views::default_web_dir() : options.web_dir;
  options_.state_dir = context.state_dir();
  for (const auto& origin : options.view_origins) {
    auto parsed = httpclient::parse_url(origin);
    if (!parsed.ok() || (parsed.value().target != "/" && !parsed.value().target.empty())) {
      throw daemon::StartupError("--allow-view-origin '" + origin +
                                 "': not an origin (https://host[:port])");
    }
    options_.cdn_origins.push_back(parsed.value().origin());
  }
  view_host_ = std::make_unique<views::ViewHost>(services_, options_);
  auto* view_host = view_host_.get();
  services_.set_mutation_listener(
      {[view_host](std::string_view service) { return view_host->watched(service); },
       [view_host](const host::Mutation& m) { view_host->publish(m); }});
  if (!fs::is_regular_file(options_.web_dir / "index.html")) {
    spdlog::warn("the host page's files are not in {} (set --web-dir): /ui/ answers 404",
                 options_.web_dir.string());
  }
}

Views::~Views() = default;

Status Views::expose(daemon::Surface& surface) {
  HEARTH_RETURN_IF_ERROR(view_host_->add_routes(surface.routes()));
  methods::view::add_methods(surface.rpc(), services_, *view_host_);
  return {};
}

}  // namespace hearth::subsystems
