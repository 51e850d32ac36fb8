#include "methods/capability/capability.hpp"

#include <boost/asio/awaitable.hpp>

#include "rpc/params.hpp"

namespace hearth::methods::capability {
namespace asio = boost::asio;
using rpc::Request;

namespace {

asio::awaitable<Result<json::value>> invoke(agentapp::Bridge& bridge, BlockingExecutor& blocking,
                                            const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  agentapp::Invocation call;
  HEARTH_CO_ASSIGN_OR_RETURN(call.app, rpc::required_string(*params, "appId"));
  HEARTH_CO_ASSIGN_OR_RETURN(call.capability, rpc::required_string(*params, "capability"));
  HEARTH_CO_ASSIGN_OR_RETURN(call.method, rpc::required_string(*params, "method"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto workspace, rpc::string_param(*params, "workspaceId", false));
  call.workspace = workspace.value_or("");
  if (const auto* p = params->if_contains("params"); p != nullptr && !p->is_null()) {
    if (!p->is_object()) co_return rpc::invalid_param("params must be an object", "params", "type");
    call.params = *p;
  }
  std::function<Result<json::value>()> work = [&bridge, call] { return bridge.invoke(call); };
  std::string lane = call.app;  // one app's calls queue behind each other, not another app's
  co_return co_await blocking.run_in(lane, work);
}

asio::awaitable<Result<json::value>> list(agentapp::Bridge& bridge, BlockingExecutor& blocking,
                                          const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto app, rpc::required_string(*params, "appId"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto workspace, rpc::string_param(*params, "workspaceId", false));
  std::function<Result<json::value>()> work =
      [&bridge, app, ws = workspace.value_or("")]() -> Result<json::value> {
    HEARTH_ASSIGN_OR_RETURN(auto capabilities, bridge.list(app, ws));
    return json::value(json::object{{"appId", app}, {"capabilities", std::move(capabilities)}});
  };
  co_return co_await blocking.run(work);
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, agentapp::Bridge& bridge,
                 BlockingExecutor& blocking) {
  dispatcher.add("capability/invoke", [&bridge, &blocking](const Request& request) {
    return invoke(bridge, blocking, request);
  });
  dispatcher.add("capability/list", [&bridge, &blocking](const Request& request) {
    return list(bridge, blocking, request);
  });
}

void add_unavailable(rpc::Dispatcher& dispatcher, const std::string& reason) {
  for (const char* method : {"capability/invoke", "capability/list"}) {
    dispatcher.add(method, [reason](const Request&) -> asio::awaitable<Result<json::value>> {
      co_return Error::make(ErrorCode::kInternalError, "Agent Apps are not available: " + reason);
    });
  }
}

}  // namespace hearth::methods::capability
