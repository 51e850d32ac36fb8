#pragma once
/// The audit log (STATE_DIR/audit.log): one line per call, registry exchange, vault read and
/// model key read, written by whichever component did it.

#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "host/audit.hpp"

namespace hearth::subsystems {

class Audit : public daemon::Component {
 public:
  static constexpr std::string_view kName = "audit";
  static std::vector<std::string_view> dependencies() { return {}; }
  explicit Audit(daemon::Context& context);

  host::AuditLog& log() { return log_; }
  void describe(boost::json::object& ready) const override;

 private:
  host::AuditLog log_;
};

}  // namespace hearth::subsystems
