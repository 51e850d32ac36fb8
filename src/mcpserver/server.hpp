#pragma once
/// hearth as an MCP server (docs/mcp-server.md): the protocol engine over the host, whatever the
/// transport (stdio in `hearth mcp serve`, Streamable HTTP at /mcp in http.hpp). Every query and
/// mutation endpoint is a tool; a service's allowed files, its view (an MCP Apps `ui://`
/// resource) and its subscriptions are resources. A tool call goes through the same pipeline as
/// lavs/call (validation, the jail, the audit log).
///
/// Virtual workspaces, when given, are a resource and two tools each (workspaces.hpp).
///
/// Methods: initialize, ping, tools/list, tools/call (progress while it runs, cancellation),
/// resources/list, resources/templates/list, resources/read, resources/subscribe|unsubscribe
/// (backed by LAVS subscriptions), logging/setLevel; notifications the server sends:
/// tools/list_changed and resources/list_changed after a reload, resources/updated, progress,
/// message (log lines at or above the session's level).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host.hpp"
#include "json/json.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/session.hpp"
#include "workspace/manager.hpp"

namespace hearth::mcpserver {

/// The protocol revision hearth speaks first; older ones it also accepts are in
/// supported_version().
inline constexpr std::string_view kLatestVersion = "2025-11-25";
bool supported_version(std::string_view version);

struct Options {
  std::string name = "hearth";
  std::string version;
  /// How often a tool call that runs on reports progress (when the client asked for it).
  std::chrono::milliseconds progress_interval{1000};
  /// resources/list lists at most this many files per service.
  std::size_t max_files = 1000;
  /// CDN origins a view may load from (the daemon's --allow-view-origin).
  std::vector<std::string> cdn_origins;
  /// Virtual workspaces offered too (workspaces.hpp); null: none. Must outlive the server.
  workspace::Manager* workspaces = nullptr;
};

class Server;

/// One client: a stdio stream, or an HTTP client between its initialize and its DELETE.
class Session {
 public:
  /// Writes one JSON-RPC message to the client outside any response (thread-safe, must not
  /// block). Empty when the transport has none (stateless HTTP).
  using PushFn = std::function<void(std::string message)>;
  Session(std::string id, std::string transport, PushFn push);
  const std::string& id() const { return id_; }  ///< empty for a stateless request's session
  const std::string& transport() const { return transport_; }
  bool initialized() const;
  std::string protocol_version() const;
  bool closed() const;

  struct Call;          ///< a tools/call in flight (server.cpp)
  struct Subscription;  ///< a subscribed resource (server.cpp)

 private:
  friend class Server;
  void push(std::string message) const;
  std::string id_;
  std::string transport_;
  PushFn push_;
  mutable std::mutex mu_;
  bool initialized_ = false;
  bool closed_ = false;
  std::string version_;
  std::string client_name_;
  int log_level_ = 6;  ///< syslog order: 0 emergency .. 7 debug; messages above it are dropped
  std::map<std::string, std::shared_ptr<Call>> calls_;                  ///< by request id
  std::map<std::string, std::shared_ptr<Subscription>> subscriptions_;  ///< by uri
  /// Subscribed workspace:// resources: what ends each one's change listener, by uri.
  std::map<std::string, std::function<void()>> watches_;
};

/// Where the notifications of one request go (an HTTP response streamed as server-sent events);
/// when empty, they go through the session's push.
using RequestSink = std::function<void(std::string message)>;

class Server {
 public:
  Server(host::Host& host, boost::asio::any_io_executor executor, Options options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// A new session with a fresh random id.
  std::shared_ptr<Session> open(std::string transport, Session::PushFn push);
  /// A session for one stateless request (HTTP without Mcp-Session-Id): no id, not registered,
  /// nothing to push to; nothing can reach it after its request, so its calls are not made
  /// cancellable.
  static std::shared_ptr<Session> stateless(std::string transport);
  /// Handles one parsed message (request, notification, response or batch) from `session`'s
  /// client; the answer, or nullopt when none is due (notifications, responses, a cancelled
  /// request). `stateless` requests need no initialize first.
  boost::asio::awaitable<std::optional<json::value>> handle(std::shared_ptr<Session> session,
                                                            json::value message,
                                                            RequestSink sink = {},
                                                            bool stateless = false);
  /// Ends a session: its calls in flight stop being waited for, its subscriptions end.
  void close(const std::shared_ptr<Session>& session);
  /// The services changed (a reload): every initialized session that can be told gets
  /// tools/list_changed and resources/list_changed, and a log line.
  void services_changed(const std::vector<std::string>& what);
  /// Sessions open now.
  std::size_t session_count() const;
  /// A session by id (HTTP's Mcp-Session-Id); null when unknown or closed.
  std::shared_ptr<Session> find(const std::string& id) const;
  /// Closes every session (shutdown).
  void close_all();
  boost::asio::any_io_executor executor() const { return executor_; }

  /// What an HTTP client may send: the session must have initialized before anything but
  /// initialize and ping.
  static bool is_initialize(const json::value& message);

 private:
  struct Catalog;  // tools and their targets, for one snapshot of the services
  /// The catalog of the services served now, built again when they changed (off the I/O
  /// threads: whether each view's document builds is read from its files).
  boost::asio::awaitable<std::shared_ptr<const Catalog>> catalog();
  void add_methods();
  std::shared_ptr<Session> session_of(const rpc::Request& request) const;
  void log(Session& session, int level, std::string_view logger, std::string text);

  boost::asio::awaitable<Result<json::value>> initialize(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> tools_list(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> tools_call(const rpc::Request& request);
  /// A call that can be cancelled or reports progress: nullopt when it was cancelled.
  boost::asio::awaitable<std::optional<Result<json::value>>> run_cancellable(
      const rpc::Request& request, std::shared_ptr<Session> session,
      std::shared_ptr<const host::Host::Service> service, std::string endpoint, json::value input,
      host::Caller caller, json::value progress_token);
  boost::asio::awaitable<Result<json::value>> resources_list(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> resources_read(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> resources_subscribe(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> resources_unsubscribe(const rpc::Request& request);
  Result<json::value> subscribe_workspace(const std::shared_ptr<Session>& session,
                                          const std::string& asked);
  boost::asio::awaitable<Result<json::value>> set_level(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> cancelled(const rpc::Request& request);

  host::Host& host_;
  boost::asio::any_io_executor executor_;
  Options options_;
  rpc::Dispatcher dispatcher_;
  mutable std::mutex mu_;
  std::map<std::string, std::weak_ptr<Session>> sessions_;
  /// rpc::Session id of a message being handled -> its MCP session and request sink.
  struct Context {
    std::weak_ptr<Session> session;
    RequestSink sink;
    bool stateless = false;
  };
  std::map<std::uint64_t, Context> contexts_;
  std::shared_ptr<const Catalog> catalog_;
};

}  // namespace hearth::mcpserver
