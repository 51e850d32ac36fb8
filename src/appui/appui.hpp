#pragma once
/// App UIs in the view host (docs/app-server.md, "Host Bridge v1"): an enabled Agent App's page
/// entries are mounted by the host page in the same sandboxed frames as LAVS views. The daemon
/// keeps the mounts (a ticket naming the app's UI files, served below /apps/<ticket>/ with the
/// views' CSP and sandbox) and binds each mount to its app: a frame's capability:invoke, which
/// the page forwards as app/ui/invoke, runs through the capability bridge as that app and no
/// other. The page speaks Host Bridge v1 with the frame (web/app-host.js); the frame never sees
/// the daemon's transport or its token.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "agentapp/bridge/bridge.hpp"
#include "agentapp/store/store.hpp"
#include "common/blocking.hpp"
#include "net/routes.hpp"
#include "rpc/session.hpp"

namespace hearth::appui {

struct Options {
  std::size_t max_file_bytes = std::size_t{16} << 20;
  std::size_t max_mounts_per_session = 32;
};

class AppUiHost {
 public:
  /// `apps`, `bridge` and `blocking` (where the store is read and the bridge runs) must outlive
  /// the host.
  AppUiHost(agentapp::AppStore& apps, agentapp::Bridge& bridge, BlockingExecutor& blocking,
            Options options = {});
  ~AppUiHost();
  AppUiHost(const AppUiHost&) = delete;
  AppUiHost& operator=(const AppUiHost&) = delete;

  /// Adds /apps/ (the mounted apps' UI files) to `routes`.
  Status add_routes(net::Routes& routes);
  // What app/ui/* do (src/methods/app/ui.cpp): the store and the bridge are used off the I/O
  // threads, on the executor given at construction.

  /// The enabled apps' UI entries.
  boost::asio::awaitable<Result<json::value>> list_entries();
  /// Mounts an app's UI entry for a WebSocket connection: the mount ends with it. `workspace`
  /// (may be empty) is the one whose capabilities the answer lists.
  boost::asio::awaitable<Result<json::value>> open_mount(std::shared_ptr<rpc::Session> session,
                                                         std::string app_id, std::string entry_key,
                                                         std::string workspace);
  /// Ends a mount of this connection.
  Result<json::value> close_mount(std::uint64_t session_id, std::string_view mount_id);
  /// A frame's capability call, through the bridge as the mount's app and no other (`call.app`
  /// and `call.caller` are set from the mount).
  boost::asio::awaitable<Result<json::value>> invoke(std::uint64_t session_id,
                                                     std::string_view mount_id,
                                                     agentapp::Invocation call);

  struct Mount {
    std::string id;
    std::string ticket;
    std::string app;
    std::string version;
    std::string entry;  ///< the entry key
    std::string route;
    std::filesystem::path ui_root;  ///< the app's UI folder in its installed package
    std::string document;           ///< the UI's entry file, relative to ui_root
    std::uint64_t session_id = 0;
  };

 private:
  Result<json::value> entries();
  Result<json::value> open(const std::shared_ptr<rpc::Session>& session, const std::string& app_id,
                           const std::string& entry_key, const std::string& workspace);
  Result<Mount> mount_of(std::uint64_t session_id, std::string_view mount_id) const;
  boost::asio::awaitable<net::HttpResponse> serve(net::HttpRequest request);
  void close_session(std::uint64_t session_id);

  agentapp::AppStore& apps_;
  agentapp::Bridge& bridge_;
  BlockingExecutor& blocking_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Mount, std::less<>> mounts_;         ///< by mount id
  std::map<std::string, std::string, std::less<>> tickets_;  ///< ticket -> mount id
  std::set<std::uint64_t> hooked_;                           ///< sessions with a close hook
  std::shared_ptr<AppUiHost*> self_;                         ///< what close hooks hold weakly
};

}  // namespace hearth::appui
