#include "subsystems/audit.hpp"

namespace hearth::subsystems {

Audit::Audit(daemon::Context& context) {
  if (auto st = log_.open(context.state_dir() / "audit.log"); !st.ok()) {
    throw daemon::StartupError(st.error().message);
  }
}

void Audit::describe(boost::json::object& ready) const {
  ready["auditLog"] = log_.path().string();
}

}  // namespace hearth::subsystems
