#include "methods/evidence/evidence.hpp"

namespace hearth::methods::evidence {
using Method = appserver::AppServer::Method;
using rpc::Request;

void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server) {
  dispatcher.add("evidence/export", [&server](const Request& r) {
    return server.call(Method::kEvidenceExport, r.params, r.session);
  });
}

}  // namespace hearth::methods::evidence
