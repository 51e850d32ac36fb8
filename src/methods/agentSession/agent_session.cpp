#include "methods/agentSession/agent_session.hpp"

namespace hearth::methods::agent_session {
using Method = appserver::AppServer::Method;
using rpc::Request;

void add_methods(rpc::Dispatcher& dispatcher, appserver::AppServer& server) {
  dispatcher.add("agentSession/start", [&server](const Request& r) {
    return server.call(Method::kStart, r.params, r.session);
  });
  dispatcher.add("agentSession/read", [&server](const Request& r) {
    return server.call(Method::kRead, r.params, r.session);
  });
  dispatcher.add("agentSession/turn/start", [&server](const Request& r) {
    return server.call(Method::kTurnStart, r.params, r.session);
  });
  dispatcher.add("agentSession/turn/cancel", [&server](const Request& r) {
    return server.call(Method::kTurnCancel, r.params, r.session);
  });
  dispatcher.add("agentSession/action/respond", [&server](const Request& r) {
    return server.call(Method::kActionRespond, r.params, r.session);
  });
}

}  // namespace hearth::methods::agent_session
