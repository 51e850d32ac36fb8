#pragma once
/// hearth as an A2A agent: the Agent Card and /a2a (A2A 1.0 and 0.3), each task one LAVS call.

#include <memory>

#include "a2a/a2a.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"

namespace hearth::subsystems {

class A2aAgent : public daemon::Component {
 public:
  static constexpr std::string_view kName = "a2a";
  static std::vector<std::string_view> dependencies() { return {"services"}; }
  explicit A2aAgent(daemon::Context& context);
  ~A2aAgent() override;

  Status expose(daemon::Surface& surface) override;

 private:
  daemon::Context& context_;
  host::Host& host_;
  std::shared_ptr<a2a::Agent> agent_;
};

}  // namespace hearth::subsystems
