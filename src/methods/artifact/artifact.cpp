#include "methods/artifact/artifact.hpp"

namespace hearth::methods::artifact {
using Method = appserver::AppServer::Method;
using rpc::Request;

void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server) {
  dispatcher.add("artifact/read", [&server](const Request& r) {
    return server.call(Method::kArtifactRead, r.params, r.session);
  });
}

}  // namespace hearth::methods::artifact
