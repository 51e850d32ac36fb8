// Host: the call pipeline (lavs-spec-v1 6.3: validate input, run the handler, validate output),
// subscriptions and the audit record of each call.
#include <spdlog/spdlog.h>

#include "host/host.hpp"

namespace hearth::host {
namespace asio = boost::asio;

Error invalid_params_error(const std::vector<schema::Violation>& violations) {
  json::array errors;
  for (const auto& v : violations) {
    errors.push_back(
        json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
  }
  const auto& first = violations.front();
  json::object data;
  data["field"] = first.field;
  data["constraint"] = first.constraint;
  data["errors"] = std::move(errors);
  return Error::make(ErrorCode::kInvalidParams, "Invalid params: " + first.message,
                     std::move(data));
}

Error endpoint_not_found(const manifest::Manifest& m, std::string_view endpoint) {
  json::array ids;
  for (const auto& ep : m.endpoints) ids.push_back(json::value(ep.id));
  json::object data;
  data["service"] = m.name;
  data["endpoint"] = endpoint;
  data["endpoints"] = std::move(ids);
  return Error::make(
      ErrorCode::kMethodNotFound,
      "Method not found: no endpoint '" + std::string(endpoint) + "' in service '" + m.name + "'",
      std::move(data));
}

namespace {
/// Counts down `budget` over the values of `v`; false once it ran out.
bool within(const json::value& v, std::size_t& budget) {
  const std::size_t cost = v.is_string() ? 1 + v.get_string().size() / 64 : 1;
  if (cost > budget) return false;
  budget -= cost;
  if (v.is_array()) {
    for (const auto& item : v.get_array()) {
      if (!within(item, budget)) return false;
    }
  } else if (v.is_object()) {
    for (const auto& member : v.get_object()) {
      if (member.key().size() / 64 >= budget || !within(member.value(), budget)) return false;
    }
  }
  return true;
}
}  // namespace

bool is_large(const json::value& v, std::size_t nodes) {
  std::size_t budget = nodes;
  return !within(v, budget);
}

Result<std::shared_ptr<const Host::Service>> Host::find_service(std::string_view name) const {
  const auto list = services();
  if (name.empty() && list->size() == 1) return list->front();
  for (const auto& s : *list) {
    if (!name.empty() && s->manifest.name == name) return s;
  }
  // Not found: the error lists what is served.
  json::array names;
  for (const auto& s : *list) names.push_back(json::value(s->manifest.name));
  json::object data;
  data["field"] = "service";
  if (name.empty()) {
    data["constraint"] = "required";
    data["services"] = std::move(names);
    return Error::make(ErrorCode::kInvalidParams,
                       "Invalid params: 'service' is required when several services are served",
                       std::move(data));
  }
  data["constraint"] = "exists";
  data["service"] = name;
  data["services"] = std::move(names);
  return Error::make(ErrorCode::kInvalidParams,
                     "Invalid params: no service named '" + std::string(name) + "'",
                     std::move(data));
}

std::chrono::milliseconds Host::timeout_for(const manifest::Endpoint& endpoint) const {
  return endpoint.effective.max_execution_time.value_or(options_.default_timeout);
}

Result<json::value> Host::prepare_input(const manifest::Endpoint& endpoint,
                                        json::value input) const {
  // No input is an empty object, so that `required` and `default` behave as clients expect.
  if (input.is_null()) input = json::object{};
  if (endpoint.input_schema) {
    endpoint.input_schema->apply_defaults(input);
    auto violations = endpoint.input_schema->validate(input);
    if (!violations.empty()) return invalid_params_error(violations);
  }
  return input;
}

asio::awaitable<Result<json::value>> Host::prepare_input_off_io(const manifest::Endpoint& endpoint,
                                                                json::value input) {
  if (!endpoint.input_schema || !is_large(input)) {
    co_return prepare_input(endpoint, std::move(input));
  }
  std::function<Result<json::value>()> work = [this, &endpoint, in = std::move(input)]() mutable {
    return prepare_input(endpoint, std::move(in));
  };
  co_return co_await blocking_->run(std::move(work));
}

Result<json::value> Host::check_output(const Service& service, const manifest::Endpoint& endpoint,
                                       Result<json::value> result) const {
  auto violations = endpoint.output_schema->validate(result.value());
  if (violations.empty()) return result;
  json::array errors;
  for (const auto& v : violations) {
    errors.push_back(
        json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
  }
  spdlog::warn("{}.{}: output does not match the output schema: {} {}", service.manifest.name,
               endpoint.id, violations.front().field, violations.front().message);
  json::object data;
  data["endpoint"] = endpoint.id;
  data["errors"] = std::move(errors);
  return Error::make(ErrorCode::kInternalError, "Invalid output from handler", std::move(data));
}

asio::awaitable<Result<json::value>> Host::call(const Service& service,
                                                std::string_view endpoint_id, json::value input,
                                                Caller caller) {
  const manifest::Endpoint* endpoint = service.manifest.find(endpoint_id);
  if (endpoint == nullptr) co_return endpoint_not_found(service.manifest, endpoint_id);
  if (endpoint->method == manifest::Method::kSubscription) {
    co_return invalid_param("endpoint '" + endpoint->id + "' is a subscription: use lavs/subscribe",
                            "endpoint", "method");
  }
  HEARTH_CO_ASSIGN_OR_RETURN(json::value prepared,
                             co_await prepare_input_off_io(*endpoint, std::move(input)));
  const bool told = on_mutation_.tell && endpoint->method == manifest::Method::kMutation &&
                    (!on_mutation_.wants || on_mutation_.wants(service.manifest.name));
  json::value ran_input = told && !caller.confidential ? prepared : json::value();
  auto handler = service.handlers.find(endpoint->id);
  handlers::Call call;
  call.service = &service.manifest;
  call.endpoint = endpoint;
  call.input = std::move(prepared);
  call.timeout = timeout_for(*endpoint);
  call.publisher = service.hub.get();
  call.executor = executor_;
  call.on_log = caller.on_log;
  auto result = co_await handler->second->call(std::move(call));
  if (result.ok() && endpoint->output_schema) {
    if (!is_large(result.value())) {
      result = check_output(service, *endpoint, std::move(result));
    } else {
      std::function<Result<json::value>()> work = [this, &service, endpoint,
                                                   r = std::move(result)]() mutable {
        return check_output(service, *endpoint, std::move(r));
      };
      result = co_await blocking_->run(std::move(work));
    }
  }
  if (told && result.ok()) {
    const bool withheld = caller.confidential;
    on_mutation_.tell(Mutation{service.manifest.name, endpoint->id, std::move(ran_input),
                               withheld ? json::value() : result.value(), std::move(caller),
                               withheld});
  }
  co_return result;
}

namespace {
/// A producer with the service it came from: the handler and the manifest it reads stay alive
/// while it runs, even once a reload has replaced the service.
class ServiceStream final : public handlers::Stream {
 public:
  ServiceStream(std::shared_ptr<const Host::Service> service,
                std::shared_ptr<handlers::Stream> inner)
      : service_(std::move(service)), inner_(std::move(inner)) {}
  void close() override { inner_->close(); }

 private:
  std::shared_ptr<const Host::Service> service_;  // declared first: outlives inner_
  std::shared_ptr<handlers::Stream> inner_;
};
}  // namespace

asio::awaitable<Result<std::string>> Host::subscribe(std::shared_ptr<Subscriber> subscriber,
                                                     std::shared_ptr<const Service> owner,
                                                     std::string_view endpoint_id,
                                                     json::value input, AfterReply* after_reply) {
  const Service& service = *owner;
  const manifest::Endpoint* ep = service.manifest.find(endpoint_id);
  if (ep == nullptr) co_return endpoint_not_found(service.manifest, endpoint_id);
  if (ep->method != manifest::Method::kSubscription) {
    co_return invalid_param("endpoint '" + ep->id + "' is a " +
                                std::string(manifest::to_string(ep->method)) +
                                ", not a subscription: use lavs/call",
                            "endpoint", "method");
  }
  HEARTH_CO_ASSIGN_OR_RETURN(json::value prepared,
                             co_await prepare_input_off_io(*ep, std::move(input)));
  handlers::Handler* handler = service.handlers.find(ep->id)->second.get();
  handlers::Call call;
  call.service = &service.manifest;
  call.endpoint = ep;
  call.input = prepared;
  call.timeout = timeout_for(*ep);
  call.publisher = service.hub.get();
  call.executor = executor_;
  auto open = [handler, owner, call = std::move(call)](
                  handlers::StreamSink sink) mutable -> Result<std::shared_ptr<handlers::Stream>> {
    HEARTH_ASSIGN_OR_RETURN(auto stream, handler->open_stream(std::move(call), std::move(sink)));
    return std::shared_ptr<handlers::Stream>(
        std::make_shared<ServiceStream>(owner, std::move(stream)));
  };
  HEARTH_CO_ASSIGN_OR_RETURN(std::string id,
                             service.hub->subscribe(subscriber, ep->id, prepared, std::move(open),
                                                    handler->shares_streams()));
  // Items flow once the client has the subscription id: right after this answer is written.
  // The hub is held: a reload may end the subscription meanwhile, and the client must still be
  // told (activate hands over what was held, the end included).
  auto activate = [hub = service.hub, id] { hub->activate(id); };
  if (after_reply != nullptr) {
    after_reply->push_back(std::move(activate));
  } else {
    activate();
  }
  co_return id;
}

bool Host::unsubscribe(std::uint64_t subscriber_id, const std::string& subscription_id) {
  for (const auto& s : *services()) {
    if (s->hub->unsubscribe(subscriber_id, subscription_id)) return true;
  }
  return false;
}

asio::awaitable<void> Host::audit(AuditRecord record) {
  if (audit_ == nullptr) co_return;
  // Written before the caller answers (an acknowledged call is recorded): one append of one
  // line to a file in the page cache, on this thread (handing it to another thread cost two
  // thread wake-ups per call, more than the write).
  audit_->record(record);
  co_return;
}

}  // namespace hearth::host
