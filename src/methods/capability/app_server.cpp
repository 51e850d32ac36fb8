#include "methods/capability/app_server.hpp"

namespace hearth::methods::capability {
using Method = appserver::AppServer::Method;
using rpc::Request;

void add_app_server_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server) {
  dispatcher.add("capability/list", [&server](const Request& r) {
    return server.call(Method::kCapabilityList, r.params, r.session);
  });
}

}  // namespace hearth::methods::capability
