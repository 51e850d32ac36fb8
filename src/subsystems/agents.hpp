#pragma once
/// Agent runs (docs/workspace.md, "Agent runs"): the configured model servers and their keys
/// (`--model-url`, `--model-server`, `--model-key`, `--model-server-key`), the runs started with
/// `agent/run`, and their transcripts.

#include <memory>

#include "common/blocking.hpp"
#include "daemon/component.hpp"
#include "daemon/daemon.hpp"
#include "methods/agent/agent.hpp"

namespace hearth::subsystems {

class Agents : public daemon::Component {
 public:
  static constexpr std::string_view kName = "agents";
  static std::vector<std::string_view> dependencies() {
    return {"audit", "registry", "workspaces"};
  }
  explicit Agents(daemon::Context& context);

  /// The model servers, the context budget and the key reader the App Server shares.
  methods::agent::AgentSettings& settings() { return settings_; }

  Status expose(daemon::Surface& surface) override;
  void stop() override;

 private:
  workspace::Manager& workspaces_;
  BlockingExecutor transcript_writer_{1};
  methods::agent::AgentSettings settings_;
  methods::agent::Runs runs_;
};

}  // namespace hearth::subsystems
