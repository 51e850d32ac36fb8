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
#include "rpc/dispatcher.hpp"

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
  /// Registers app/ui/entries, app/ui/open, app/ui/invoke and app/ui/close.
  void add_methods(rpc::Dispatcher& dispatcher);

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
  Result<json::value> open(const std::shared_ptr<rpc::Session>& session, const json::value& params);
  Result<Mount> mount_of(std::uint64_t session_id, const json::value& params) const;
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
