#pragma once
/// The jail, as the daemon's first component: the machine probed once at start; every handler
/// process, JS worker, workspace script and app backend goes through it.

#include <memory>

#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "jail/jail.hpp"

namespace hearth::subsystems {

/// The jail of a serving command (`hearth serve`, `hearth mcp serve`): what is missing logged, or
/// the loud --insecure-no-sandbox warning; null, with the error logged, when it cannot be made.
std::shared_ptr<const jail::Jail> open_jail(bool insecure_no_sandbox);

class Sandbox : public daemon::Component {
 public:
  static constexpr std::string_view kName = "jail";
  static std::vector<std::string_view> dependencies() { return {}; }
  explicit Sandbox(daemon::Context& context);

  const std::shared_ptr<const jail::Jail>& jail() const { return jail_; }

 private:
  std::shared_ptr<const jail::Jail> jail_;
};

}  // namespace hearth::subsystems
