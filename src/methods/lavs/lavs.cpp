#include "methods/lavs/lavs.hpp"

#include "methods/audit.hpp"
#include "methods/lavs/subscriber.hpp"
#include "rpc/params.hpp"

namespace hearth::methods::lavs {
namespace asio = boost::asio;
using host::Host;
using methods::Target;
using rpc::Request;

namespace {

/// The service a request names (its optional `service` parameter); `target` learns its name.
/// Held for the whole request: a reload meanwhile does not pull it away.
Result<std::shared_ptr<const Host::Service>> service_of(const Host& host,
                                                        const json::object& params,
                                                        Target& target) {
  HEARTH_ASSIGN_OR_RETURN(auto name, rpc::string_param(params, "service", false));
  target.service = name.value_or("");
  HEARTH_ASSIGN_OR_RETURN(auto service, host.find_service(target.service));
  target.service = service->manifest.name;
  return service;
}

asio::awaitable<Result<json::value>> call(Host& host, const Request& request, Target& target) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, service_of(host, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "endpoint"));
  json::value input = rpc::take_param(request, "input");  // named: see common/blocking.hpp
  host::Caller caller = caller_of(request);
  co_return co_await host.call(*service, target.endpoint, std::move(input), std::move(caller));
}

asio::awaitable<Result<json::value>> subscribe(Host& host, const Request& request, Target& target) {
  if (!request.session || !request.session->can_push()) {
    json::object data;
    data["transport"] = request.session ? request.session->transport() : "inproc";
    data["hint"] = "subscribe over the WebSocket endpoint /ws";
    co_return Error::make(ErrorCode::kMethodNotFound,
                          "Method not found: lavs/subscribe is only available over WebSocket",
                          std::move(data));
  }
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, service_of(host, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "endpoint"));
  json::value input = rpc::take_param(request, "input");
  auto subscriber = session_subscriber(request.session);  // named: see common/blocking.hpp
  HEARTH_CO_ASSIGN_OR_RETURN(
      std::string id, co_await host.subscribe(std::move(subscriber), service, target.endpoint,
                                              std::move(input), request.after_reply));
  co_return json::value(json::object{{"subscriptionId", id}});
}

asio::awaitable<Result<json::value>> read_file(Host& host, const Request& request, Target& target) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, service_of(host, *params, target));
  HEARTH_CO_ASSIGN_OR_RETURN(target.endpoint, rpc::required_string(*params, "path"));
  co_return co_await host.read_file(*service, target.endpoint);
}

/// A method that is recorded in the audit log: `run` fills in what it was about.
template <auto Run>
asio::awaitable<Result<json::value>> with_audit(Host& host, const Request& request) {
  const auto start = Clock::now();
  Target target;
  auto result = co_await Run(host, request, target);
  co_return co_await audited(host, request, target, start, std::move(result));
}

asio::awaitable<Result<json::value>> unsubscribe(Host& host, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(std::string id, rpc::required_string(*params, "subscriptionId"));
  const std::uint64_t session_id = request.session ? request.session->id() : 0;
  if (host.unsubscribe(session_id, id)) {
    co_return json::value(json::object{{"subscriptionId", id}, {"unsubscribed", true}});
  }
  co_return no_subscription(id, "this connection");
}

asio::awaitable<Result<json::value>> manifest(Host& host, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  Target target;
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, service_of(host, *params, target));
  if (request.raw_result != nullptr && service->manifest_text) {
    // Serialised once at load: answering is a copy of the text, not of the tree.
    *request.raw_result = service->manifest_text;
    co_return json::value();
  }
  co_return service->manifest.raw;
}

json::value service_entry(const manifest::Manifest& m) {
  json::array endpoints;
  for (const auto& ep : m.endpoints) {
    json::object e;
    e["id"] = ep.id;
    e["method"] = manifest::to_string(ep.method);
    if (!ep.description.empty()) e["description"] = ep.description;
    e["handler"] = ep.handler_type;
    endpoints.push_back(std::move(e));
  }
  json::object entry;
  entry["name"] = m.name;
  entry["version"] = m.version;
  entry["lavs"] = m.lavs;
  if (!m.description.empty()) entry["description"] = m.description;
  entry["endpoints"] = std::move(endpoints);
  entry["hasView"] = !m.view.is_null();
  return entry;
}

asio::awaitable<Result<json::value>> services(Host& host, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  (void)params;  // takes none, but params must still be an object
  json::array list;
  for (const auto& s : *host.services()) list.push_back(service_entry(s->manifest));
  co_return json::value(json::object{{"services", std::move(list)}});
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Host& host) {
  const auto bind = [&host](auto method) {
    return [&host, method](const Request& r) { return method(host, r); };
  };
  dispatcher.add("lavs/call", bind(with_audit<call>));
  dispatcher.add("lavs/subscribe", bind(with_audit<subscribe>));
  dispatcher.add("lavs/unsubscribe", bind(unsubscribe));
  dispatcher.add("lavs/manifest", bind(manifest));
  dispatcher.add("lavs/services", bind(services));
  dispatcher.add("lavs/readFile", bind(with_audit<read_file>));
}

void name_lafs_operations(rpc::Dispatcher& dispatcher, const host::Host& host) {
  // With one service, requests may leave `service` out; the envelope still names it. Asked at
  // each request: a reload may change what is served.
  dispatcher.set_operation_namer([&host](const rpc::Request& request) {
    if (request.method != "lavs/call" && request.method != "lavs/subscribe") return request.method;
    const json::value* endpoint = json::member(request.params, "endpoint");
    if (endpoint == nullptr || !endpoint->is_string()) return request.method;
    const json::value* service = json::member(request.params, "service");
    std::string name;
    if (service != nullptr && service->is_string()) {
      name = std::string(service->get_string());
    } else if (const auto list = host.services(); list->size() == 1) {
      name = list->front()->manifest.name;
    }
    return name.empty() ? std::string(endpoint->get_string())
                        : name + "." + std::string(endpoint->get_string());
  });
}

}  // namespace hearth::methods::lavs
