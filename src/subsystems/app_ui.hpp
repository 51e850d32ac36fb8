#pragma once
/// Agent App pages in the view host (docs/app-server.md, "Host Bridge v1"): /apps/ and
/// `app/ui/*`, each mount bound to its app.

#include <memory>

#include "appui/appui.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"

namespace hearth::subsystems {

class AppUi : public daemon::Component {
 public:
  static constexpr std::string_view kName = "app-ui";
  static std::vector<std::string_view> dependencies() { return {"apps"}; }
  explicit AppUi(daemon::Context& context);
  ~AppUi() override;

  Status expose(daemon::Surface& surface) override;

 private:
  std::unique_ptr<appui::AppUiHost> host_;  ///< null when the apps are not served
};

}  // namespace hearth::subsystems
