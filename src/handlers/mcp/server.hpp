#pragma once
/// Server: one MCP server as the mcp kind runs it - its configuration, the permissions it runs
/// under, and its current session, started lazily and again after it ended.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "httpclient/client.hpp"
#include "jail/jail.hpp"
#include "manifest/manifest.hpp"
#include "mcp/config.hpp"
#include "mcp/session.hpp"

namespace hearth::handlers::mcp {

struct ServerSpec {
  hearth::mcp::ServerConfig config;
  std::string service;
  std::filesystem::path service_dir;       ///< canonical
  manifest::Permissions permissions;       ///< the effective permissions of the endpoints using it
  std::shared_ptr<const jail::Jail> jail;  ///< null: unconfined (tests)
  std::size_t max_message = std::size_t{16} << 20;
};

class Server : public std::enable_shared_from_this<Server> {
 public:
  Server(const boost::asio::any_io_executor& executor, ServerSpec spec,
         std::shared_ptr<httpclient::Client> http);
  ~Server();

  /// The running session, starting the server first when needed; the start (process and
  /// initialize handshake) gets `timeout`. Concurrent callers share one start.
  boost::asio::awaitable<Result<std::shared_ptr<hearth::mcp::Session>>> session(
      std::chrono::milliseconds timeout);

  /// Stops the server; later calls fail with "the daemon is stopping". Idempotent.
  void stop();

  const std::string& name() const { return spec_.config.name; }
  std::string label() const { return "MCP server '" + spec_.config.name + "'"; }
  /// How many sessions were started (tests check restarts with it).
  int starts() const;

 private:
  boost::asio::awaitable<Result<std::shared_ptr<hearth::mcp::Session>>> session_on_strand(
      std::chrono::milliseconds timeout);
  Result<std::unique_ptr<hearth::mcp::Transport>> make_transport();

  boost::asio::any_io_executor executor_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  ServerSpec spec_;
  std::shared_ptr<httpclient::Client> http_;

  // Strand state.
  std::shared_ptr<hearth::mcp::Session> session_;
  bool starting_ = false;
  boost::asio::steady_timer started_;  ///< cancelled when a start ends, to wake who waits

  std::atomic<bool> stopped_{false};
  std::atomic<int> starts_{0};
  mutable std::mutex mutex_;  ///< guards session_ for stop() from other threads
};

}  // namespace hearth::handlers::mcp
