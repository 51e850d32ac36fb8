#include "methods/view/view.hpp"

#include "methods/audit.hpp"
#include "methods/lavs/subscriber.hpp"
#include "rpc/params.hpp"

namespace hearth::methods::view {
namespace asio = boost::asio;
using host::Host;
using rpc::Request;
using views::ViewHost;

namespace {

/// A WebSocket connection as the view host's viewer: agent actions become `view/agentAction`
/// notifications pushed to it while it is open.
class SessionViewer final : public views::Viewer {
 public:
  explicit SessionViewer(const std::shared_ptr<rpc::Session>& session)
      : session_(session), id_(session->id()) {}

  std::uint64_t id() const override { return id_; }

  void agent_action(const json::object& action) override {
    if (auto session = session_.lock()) {
      session->push(json::dump(rpc::make_notification("view/agentAction", action)));
    }
  }

  void on_close(std::function<void()> hook) override {
    if (auto session = session_.lock()) {
      session->on_close(std::move(hook));
    } else {
      hook();  // gone: closed already
    }
  }

 private:
  std::weak_ptr<rpc::Session> session_;
  std::uint64_t id_;
};

/// Everything a method of a mount needs: the host, the view host, and the mount it names.
struct Context {
  Host& host;
  ViewHost& views;
};

Result<const json::object*> params_of(const Request& request) {
  if (!request.session || !request.session->can_push()) {
    json::object data;
    data["transport"] = request.session ? request.session->transport() : "inproc";
    data["hint"] = "view/* methods are only available over the WebSocket endpoint /ws";
    return Error::make(ErrorCode::kMethodNotFound,
                       "Method not found: " + request.method + " is only available over WebSocket",
                       std::move(data));
  }
  return rpc::params_object(request);
}

/// The mount a request names (`mountId`) and its service, held for the whole request.
struct Mounted {
  ViewHost::MountRef mount;
  std::shared_ptr<const Host::Service> service;
};

Result<Mounted> mounted(Context& c, const Request& request, const json::object& params,
                        Target& target) {
  HEARTH_ASSIGN_OR_RETURN(std::string mount_id, rpc::required_string(params, "mountId"));
  HEARTH_ASSIGN_OR_RETURN(auto mount, c.views.find(request.session->id(), mount_id));
  target.service = mount.service;
  target.mount = mount.id;
  HEARTH_ASSIGN_OR_RETURN(auto service, c.host.find_service(mount.service));
  return Mounted{std::move(mount), std::move(service)};
}

asio::awaitable<Result<json::value>> open(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string service, rpc::required_string(*params, "service"));
  std::shared_ptr<views::Viewer> viewer = std::make_shared<SessionViewer>(request.session);
  co_return co_await c.views.open(std::move(viewer), std::move(service));
}

asio::awaitable<Result<json::value>> close(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string mount_id, rpc::required_string(*params, "mountId"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto mount, c.views.find(request.session->id(), mount_id));
  c.views.close(request.session->id(), mount.id);
  co_return json::value(json::object{{"mountId", mount.id}, {"closed", true}});
}

asio::awaitable<Result<json::value>> call(Context& c, const Request& request, Target& target) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "endpoint"));
  json::value input = rpc::take_param(request, "input");
  host::Caller caller = caller_of(request, m.mount.id);
  co_return co_await c.host.call(*m.service, target.endpoint, std::move(input), std::move(caller));
}

asio::awaitable<Result<json::value>> subscribe(Context& c, const Request& request, Target& target) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "endpoint"));
  json::value input = rpc::take_param(request, "input");
  auto subscriber = lavs::session_subscriber(request.session);  // named: see common/blocking.hpp
  HEARTH_CO_ASSIGN_OR_RETURN(
      std::string id, co_await c.host.subscribe(std::move(subscriber), m.service, target.endpoint,
                                                std::move(input), request.after_reply));
  if (!c.views.add_subscription(m.mount.id, id)) {
    // The mount closed while the subscription started: it must not outlive it.
    c.host.unsubscribe(request.session->id(), id);
    co_return views::no_mount(m.mount.id);
  }
  co_return json::value(json::object{{"subscriptionId", id}});
}

asio::awaitable<Result<json::value>> unsubscribe(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  Target target;
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string id, rpc::required_string(*params, "subscriptionId"));
  if (c.views.remove_subscription(m.mount.id, id) &&
      c.host.unsubscribe(request.session->id(), id)) {
    co_return json::value(json::object{{"subscriptionId", id}, {"unsubscribed", true}});
  }
  co_return no_subscription(id, "this view mount");
}

asio::awaitable<Result<json::value>> manifest(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  Target target;
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  co_return m.service->manifest.raw;
}

asio::awaitable<Result<json::value>> read_file(Context& c, const Request& request, Target& target) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "path"));
  co_return co_await c.host.read_file(*m.service, target.endpoint);
}

asio::awaitable<Result<json::value>> get_state(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  Target target;
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  co_return co_await c.views.get_state(m.mount.service);
}

asio::awaitable<Result<json::value>> set_state(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  Target target;
  HEARTH_CO_ASSIGN_OR_RETURN(Mounted m, mounted(c, request, *params, target));
  const json::value* state = params->if_contains("state");
  if (state == nullptr) {
    co_return rpc::invalid_param("'state' is required (any JSON value)", "state", "required");
  }
  json::value copy = *state;  // named: see common/blocking.hpp
  co_return co_await c.views.set_state(m.mount.service, std::move(copy));
}

asio::awaitable<Result<json::value>> mounts(Context& c, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, params_of(request));
  (void)params;
  co_return c.views.mounts();
}

/// A method recorded in the audit log with the mount it was made for.
template <auto Run>
asio::awaitable<Result<json::value>> with_audit(Context& c, const Request& request) {
  const auto start = Clock::now();
  Target target;
  auto result = co_await Run(c, request, target);
  co_return co_await audited(c.host, request, target, start, std::move(result));
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Host& host, ViewHost& views) {
  auto context = std::make_shared<Context>(Context{host, views});
  const auto bind = [context](auto method) {
    return [context, method](const Request& r) { return method(*context, r); };
  };
  dispatcher.add("view/open", bind(open));
  dispatcher.add("view/close", bind(close));
  dispatcher.add("view/call", bind(with_audit<call>));
  dispatcher.add("view/subscribe", bind(with_audit<subscribe>));
  dispatcher.add("view/unsubscribe", bind(unsubscribe));
  dispatcher.add("view/manifest", bind(manifest));
  dispatcher.add("view/readFile", bind(with_audit<read_file>));
  dispatcher.add("view/getState", bind(get_state));
  dispatcher.add("view/setState", bind(set_state));
  dispatcher.add("view/mounts", bind(mounts));
}

}  // namespace hearth::methods::view
