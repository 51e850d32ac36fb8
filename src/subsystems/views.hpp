#pragma once
/// The view host (docs/view-host.md): the page under /ui/, view mounts, `view/*`, and the agent
/// actions fed by the services' mutations.

#include <memory>
#include <string>
#include <vector>

#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "views/views.hpp"

namespace hearth::subsystems {

class Views : public daemon::Component {
 public:
  static constexpr std::string_view kName = "views";
  static std::vector<std::string_view> dependencies() { return {"services"}; }
  explicit Views(daemon::Context& context);
  ~Views() override;

  views::ViewHost& host() { return *view_host_; }
  /// The origins `cdn` view components may load code from (--allow-view-origin).
  const std::vector<std::string>& cdn_origins() const { return options_.cdn_origins; }

  Status expose(daemon::Surface& surface) override;

 private:
  host::Host& services_;
  views::Options options_;
  std::unique_ptr<views::ViewHost> view_host_;
};

}  // namespace hearth::subsystems
