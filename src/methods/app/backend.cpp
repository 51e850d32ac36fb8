#include "methods/app/backend.hpp"

#include <boost/asio/awaitable.hpp>

#include "rpc/params.hpp"

namespace hearth::methods::app {
namespace asio = boost::asio;
using rpc::Request;

namespace {

asio::awaitable<Result<json::value>> backend_call(agentapp::Backends& backends,
                                                  const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto app, rpc::required_string(*params, "appId"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto method, rpc::required_string(*params, "method"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, rpc::string_param(*params, "service", false));
  json::value args(nullptr);
  if (const auto* p = params->if_contains("params"); p != nullptr && !p->is_null()) {
    if (!p->is_object() && !p->is_array()) {
      co_return rpc::invalid_param("params must be an object or an array", "params", "type");
    }
    args = *p;
  }
  co_return co_await backends.call(std::move(app), service.value_or(""), std::move(method),
                                   std::move(args));
}

asio::awaitable<Result<json::value>> backend_status(agentapp::Backends& backends,
                                                    const Request& request) {
  std::optional<std::string> app;
  if (!request.params.is_null()) {
    HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
    HEARTH_CO_ASSIGN_OR_RETURN(app, rpc::string_param(*params, "appId", false));
  }
  auto list = co_await backends.status(app.value_or(""));
  co_return json::value(json::object{{"backends", std::move(list)}});
}

}  // namespace

void add_backend_methods(rpc::Dispatcher& dispatcher, agentapp::Backends& backends) {
  dispatcher.add("app/backend/call",
                 [&backends](const Request& request) { return backend_call(backends, request); });
  dispatcher.add("app/backend/status",
                 [&backends](const Request& request) { return backend_status(backends, request); });
}

void add_backend_unavailable(rpc::Dispatcher& dispatcher, const std::string& reason) {
  for (const char* method : {"app/backend/call", "app/backend/status"}) {
    dispatcher.add(method, [reason](const Request&) -> asio::awaitable<Result<json::value>> {
      co_return Error::make(ErrorCode::kInternalError, "Agent Apps are not available: " + reason);
    });
  }
}

}  // namespace hearth::methods::app
