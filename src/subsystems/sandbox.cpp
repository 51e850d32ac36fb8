#include "subsystems/sandbox.hpp"

#include <spdlog/spdlog.h>

#include "proc/process.hpp"

namespace hearth::subsystems {

std::shared_ptr<const jail::Jail> open_jail(bool insecure_no_sandbox) {
  jail::JailOptions jail_options;
  jail_options.launcher = proc::launcher();
  jail_options.insecure_no_sandbox = insecure_no_sandbox;
  auto jail = jail::Jail::create(jail_options);
  if (!jail.ok()) {
    spdlog::error("jail: {}", jail.error().message);
    return nullptr;
  }
  if (insecure_no_sandbox) {
    spdlog::warn(
        "*** --insecure-no-sandbox: handler processes run WITHOUT the jail. fileAccess, "
        "networkAccess and maxMemory are NOT enforced by the operating system. ***");
  } else {
    for (const auto& m : jail.value().capabilities().mechanisms) {
      if (!m.ok) spdlog::warn("jail: {} is not available: {}", m.name, m.detail);
    }
  }
  return std::make_shared<const jail::Jail>(std::move(jail).value());
}

Sandbox::Sandbox(daemon::Context& context)
    : jail_(open_jail(context.options().insecure_no_sandbox)) {
  if (!jail_) throw daemon::StartupError("the jail cannot be made (see above)");
}

}  // namespace hearth::subsystems
