#pragma once
/// A transport carries JSON-RPC messages between hearth and one MCP server: stdio (a child
/// process, newline-delimited JSON) or Streamable HTTP. The Session above it owns the protocol.

#include <functional>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::mcp {

class Transport {
 public:
  struct Handlers {
    /// A message from the server (a response, a notification or a request). Any thread.
    std::function<void(json::value message)> on_message;
    /// Once: the server is gone (exited, session expired); nothing more will arrive. Any thread.
    std::function<void(Error reason)> on_closed;
  };

  virtual ~Transport() = default;
  /// Starts carrying messages (a stdio transport starts its process here). Handlers may run
  /// before open() returns.
  virtual Status open(Handlers handlers) = 0;
  /// Sends one message. Failures that concern a request come back as an error response to it
  /// (whose `data.origin` is "hearth", so the session keeps its code: -32001 for a destination
  /// networkAccess refuses), failures of the whole connection through on_closed.
  virtual void send(json::value message) = 0;
  /// The initialize handshake is done: the protocol version both sides speak.
  virtual void initialized(std::string_view protocol_version) { (void)protocol_version; }
  /// Stops; no handler runs after it returns. Idempotent.
  virtual void close() = 0;
};

}  // namespace hearth::mcp
