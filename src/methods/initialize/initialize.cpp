#include "methods/initialize/initialize.hpp"

namespace hearth::methods::initialize {
using Method = appserver::AppServer::Method;
using rpc::Request;

void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server) {
  dispatcher.add("initialize", [&server](const Request& r) {
    return server.call(Method::kInitialize, r.params, r.session);
  });
  dispatcher.add("initialized", [&server](const Request& r) {
    return server.call(Method::kInitialized, r.params, r.session);
  });
}

}  // namespace hearth::methods::initialize
