#pragma once
/// Session: hearth as an MCP client (MCP 2025-06-18 and 2025-11-25) over one Transport.
///
/// - start(): `initialize` with hearth's newest protocol version; the server's answer must be a
///   version hearth speaks (kSupportedVersions), else the session fails with a message naming
///   both. Then `notifications/initialized`. hearth declares no client capabilities (no roots,
///   sampling or elicitation): a server request for them gets -32601, `ping` gets {}.
/// - tools(): `tools/list`, every page, cached until `notifications/tools/list_changed`.
/// - call_tool(): `tools/call` with a progress token. The time limit counts from the request and
///   restarts at each `notifications/progress` for it, within an optional total limit. At the
///   limit the request is abandoned with `notifications/cancelled` and kTimeout.
/// - When the transport closes (a crash, an expired session), every request waiting fails with
///   the reason and alive() turns false; the owner starts a new session.
/// Everything runs on one strand of the given executor; the coroutines may be awaited from any.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"
#include "mcp/message.hpp"
#include "mcp/transport.hpp"

namespace hearth::mcp {

struct Limits {
  /// Without news from the server; each progress notification starts it again.
  std::chrono::milliseconds timeout{30000};
  /// Since the request, whatever the progress; 0: none.
  std::chrono::milliseconds total{0};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  /// `server` names it in messages ("MCP server 'files'").
  static std::shared_ptr<Session> create(boost::asio::any_io_executor executor,
                                         std::unique_ptr<Transport> transport, std::string server);
  ~Session();

  /// Opens the transport and runs the initialize handshake within `timeout`.
  boost::asio::awaitable<Status> start(std::chrono::milliseconds timeout);

  /// The server's tools (cached; fetched again after list_changed or when `refresh`).
  boost::asio::awaitable<Result<std::vector<Tool>>> tools(std::chrono::milliseconds timeout,
                                                          bool refresh = false);

  /// Calls a tool and returns its CallToolResult as the server sent it. A tool the server does
  /// not list (after one refresh) is kMethodNotFound-free: kHandlerError naming the tools it has.
  boost::asio::awaitable<Result<json::object>> call_tool(std::string tool, json::value arguments,
                                                         Limits limits);

  /// Any request (for tests and diagnostics): the `result` member of the response.
  boost::asio::awaitable<Result<json::value>> request(std::string method, json::object params,
                                                      Limits limits);

  /// False once the transport closed or close() was called.
  bool alive() const;
  /// Closes the transport; requests waiting fail. Idempotent, any thread.
  void close();

  /// After start(): what the server said about itself.
  std::string protocol_version() const;
  json::object server_info() const;
  /// How many tools/list requests were sent (tests check the cache with it).
  std::uint64_t tools_list_requests() const;

  struct State;

 private:
  Session() = default;
  std::shared_ptr<State> state_;
};

}  // namespace hearth::mcp
