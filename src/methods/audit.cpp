#include "methods/audit.hpp"

namespace hearth::methods {

boost::asio::awaitable<Result<json::value>> audited(host::Host& host, const rpc::Request& request,
                                                    const Target& target, Clock::time_point start,
                                                    Result<json::value> result) {
  host::AuditRecord record;
  record.service = target.service;
  record.endpoint = target.endpoint;
  record.mount = target.mount;
  record.method = request.method;
  record.transport = request.session ? request.session->transport() : "inproc";
  if (request.session) record.client = request.session->client();
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  if (!result.ok()) record.error = result.error().code;
  co_await host.audit(std::move(record));
  co_return result;
}

Error no_subscription(const std::string& id, std::string_view where) {
  json::object data;
  data["field"] = "subscriptionId";
  data["constraint"] = "exists";
  data["subscriptionId"] = id;
  return Error::make(ErrorCode::kInvalidParams,
                     "Invalid params: no subscription '" + id + "' on " + std::string(where),
                     std::move(data));
}

host::Caller caller_of(const rpc::Request& request, std::string mount) {
  host::Caller caller;
  caller.transport = request.session ? request.session->transport() : "inproc";
  if (request.session) caller.client = request.session->client();
  caller.mount = std::move(mount);
  return caller;
}

}  // namespace hearth::methods
