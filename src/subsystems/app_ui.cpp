#include "subsystems/app_ui.hpp"

#include <spdlog/spdlog.h>

#include "methods/app/ui.hpp"
#include "subsystems/apps.hpp"

namespace hearth::subsystems {

AppUi::AppUi(daemon::Context& context) {
  auto& apps = context.find<Apps>();
  if (!apps.available()) return;
  host_ = std::make_unique<appui::AppUiHost>(apps.store(), apps.bridge(), apps.calls());
}

AppUi::~AppUi() = default;

Status AppUi::expose(daemon::Surface& surface) {
  if (!host_) return {};
  if (auto st = host_->add_routes(surface.routes()); !st.ok()) {
    spdlog::error("app UIs are not served: {}", st.error().message);
  }
  methods::app::add_ui_methods(surface.rpc(), *host_);
  return {};
}

}  // namespace hearth::subsystems
