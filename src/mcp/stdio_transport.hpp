#pragma once
/// The stdio transport (MCP "stdio"): the server is a child process reading JSON-RPC messages from
/// stdin and writing them to stdout, one per line (UTF-8, no embedded new lines). Its stderr is
/// kept (the last few KiB) to explain an exit, and logged at debug level.
///
/// How the child is started (the jail, its environment) is the caller's: `launch` starts it with
/// the callbacks it is given, and `verdict` may replace the exit's own explanation (a jail
/// mechanism that failed, a memory limit).

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mcp/transport.hpp"
#include "proc/process.hpp"

namespace hearth::mcp {

class StdioTransport final : public Transport {
 public:
  using Launch = std::function<Result<std::shared_ptr<proc::Duplex>>(proc::Duplex::Callbacks)>;
  using Verdict = std::function<std::optional<Error>(const proc::RunResult&)>;

  /// `label` names the server in messages ("MCP server 'files'"); a line longer than `max_line`
  /// bytes closes the transport.
  StdioTransport(std::string label, Launch launch, Verdict verdict = {},
                 std::size_t max_line = std::size_t{16} << 20);
  ~StdioTransport() override;

  Status open(Handlers handlers) override;
  void send(json::value message) override;
  void close() override;

  /// The launcher's pid, or -1 (tests).
  int pid() const;
  /// The end of what the process wrote to stderr so far (its last KiB), e.g. to explain why a
  /// server that is still running never answered.
  std::string stderr_tail() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
  Launch launch_;
};

/// Why a stdio server's process ended, as a message ("exited with code 1", "was killed by
/// signal 9"), followed by the end of its stderr when there is one.
std::string describe_exit(const proc::RunResult& result);

}  // namespace hearth::mcp
