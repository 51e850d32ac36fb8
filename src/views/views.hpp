#pragma once
/// The view host (docs/view-host.md): the page a person opens (/ui/, files of web/), the mounts
/// of view components (a ticket for the frame's files, a secret for its handshake, the
/// subscriptions made through it), the views' saved state, and the agent actions told to the
/// connections that hold a mount of a changed service. The view/* JSON-RPC methods over it are
/// in src/methods/view, which also decide how a connection is told an agent action (Viewer).

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "host/host.hpp"
#include "json/json.hpp"
#include "net/routes.hpp"
#include "views/component.hpp"

namespace hearth::views {

struct Options {
  /// The host page's files (index.html, app.js, view-bootstrap.js, ...).
  std::filesystem::path web_dir;
  /// Views' saved state goes to state_dir/views (not saved when empty).
  std::filesystem::path state_dir;
  /// Origins a `cdn` component may load its code from ("https://cdn.example.com").
  std::vector<std::string> cdn_origins;
  std::size_t max_state_bytes = std::size_t{256} << 10;
  /// An agent action whose result is larger leaves the result out (resultOmitted: true).
  std::size_t max_action_result_bytes = std::size_t{64} << 10;
  /// A file larger than this is not served.
  std::size_t max_file_bytes = std::size_t{16} << 20;
  /// Mounts one connection may hold.
  std::size_t max_mounts_per_session = 64;
};

/// -32602 for a mount id the connection does not hold (data.field = "mountId").
Error no_mount(std::string_view mount_id);

/// The default web folder: $HEARTH_WEB_DIR, else the share/hearth/web folder beside the
/// executable's, else the source tree's web/ this build came from.
std::filesystem::path default_web_dir();

/// A connection that holds view mounts, as the view host sees it.
class Viewer {
 public:
  virtual ~Viewer() = default;
  /// The connection's id (common/connection_id.hpp), which its host::Subscriber has too: mounts
  /// are counted and found by it, and a closed mount's subscriptions ended with it
  /// (Host::unsubscribe).
  virtual std::uint64_t id() const = 0;
  /// Tells the connection an agent action on a service it holds a mount of: {service, endpoint,
  /// input, result | resultOmitted | withheld, actor, seq, at} (docs/view-host.md). Called from
  /// the thread that ran the mutation: must not block (queue and return).
  virtual void agent_action(const json::object& action) = 0;
  /// Runs `hook` when the connection closes, at once if it already has: its mounts end then.
  virtual void on_close(std::function<void()> hook) = 0;
};

class ViewHost {
 public:
  /// What a view/* method needs of a mount.
  struct MountRef {
    std::string id;
    std::string service;
  };

  ViewHost(host::Host& host, Options options);
  ~ViewHost();
  ViewHost(const ViewHost&) = delete;
  ViewHost& operator=(const ViewHost&) = delete;

  /// Adds /ui/, /ui (redirect), / (redirect) and /views/ to `routes`.
  Status add_routes(net::Routes& routes);

  /// view/open: mounts `service`'s view for `viewer` (the mount ends with it). {mountId, url,
  /// secret, service, component: {type}, fallback, theme}.
  boost::asio::awaitable<Result<json::value>> open(std::shared_ptr<Viewer> viewer,
                                                   std::string service);

  /// The mount `mount_id` of the viewer `viewer_id`; -32602 (field mountId) otherwise.
  Result<MountRef> find(std::uint64_t viewer_id, std::string_view mount_id) const;

  /// view/close: ends the mount's subscriptions (they are the viewer's: Host::unsubscribe with
  /// its id) and forgets its ticket. False when the viewer holds no such mount.
  bool close(std::uint64_t viewer_id, std::string_view mount_id);

  /// Records a subscription made through a mount, so that closing the mount ends it. False when
  /// the mount closed meanwhile (the caller ends the subscription).
  bool add_subscription(std::string_view mount_id, std::string subscription_id);
  /// Forgets one (view/unsubscribe); false when the mount did not make it.
  bool remove_subscription(std::string_view mount_id, const std::string& subscription_id);

  /// view/mounts: every mount, and the live subscriptions of every service.
  json::value mounts() const;

  /// view/getState and view/setState, on a blocking thread.
  boost::asio::awaitable<Result<json::value>> get_state(std::string service);
  boost::asio::awaitable<Result<json::value>> set_state(std::string service, json::value state);

  /// Whether a connection holds a mount of `service` (the host's mutation listener asks first,
  /// so that mutations nobody watches cost nothing).
  bool watched(std::string_view service) const;

  /// Tells the connections holding a mount of the mutated service (view/agentAction). Meant as
  /// the host's mutation listener: it only queues pushes.
  void publish(const host::Mutation& mutation);

 private:
  struct Mount {
    std::string id;
    std::string ticket;
    std::string service;
    std::uint64_t viewer_id = 0;
    std::shared_ptr<Viewer> viewer;
    Component component;
    std::set<std::string> subscriptions;
  };

  boost::asio::awaitable<net::HttpResponse> serve_view(net::HttpRequest request);
  boost::asio::awaitable<net::HttpResponse> serve_page(net::HttpRequest request);
  /// Registers `mount` unless its viewer holds too many; `first_of_viewer` tells whether the
  /// viewer's close hook is still to be added.
  bool admit(const std::shared_ptr<Mount>& mount, bool& first_of_viewer);
  /// The mount of a ticket (a copy: the mount may close meanwhile).
  std::shared_ptr<const Mount> by_ticket(std::string_view ticket) const;
  void close_viewer(std::uint64_t viewer_id);
  std::filesystem::path state_file(std::string_view service) const;

  host::Host& host_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Mount>, std::less<>> mounts_;  ///< by mount id
  std::map<std::string, std::string, std::less<>> tickets_;            ///< ticket -> mount id
  std::set<std::uint64_t> hooked_viewers_;  ///< viewers whose close ends their mounts
  std::map<std::string, std::uint64_t, std::less<>> action_seq_;  ///< per service
  /// Alive while the host is: a viewer's close hook holds a weak reference to it.
  std::shared_ptr<ViewHost*> self_;
};

}  // namespace hearth::views
