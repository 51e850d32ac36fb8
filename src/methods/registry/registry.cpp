#include "methods/registry/registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>

#include "methods/audit.hpp"
#include "rpc/params.hpp"

namespace hearth::methods::registry {
namespace asio = boost::asio;
using hearth::a2s::Gateway;
using rpc::Request;

namespace {

Result<std::size_t> limit_param(const json::object& params) {
  HEARTH_ASSIGN_OR_RETURN(auto limit, rpc::int_param(params, "limit", 1, 100));
  return static_cast<std::size_t>(limit.value_or(10));
}

/// A search request is a sentence or a few. Reading one costs a few WordNet lookups a word (some
/// 30 us a word never seen before, docs/a2s.md), so its length is bounded.
constexpr std::size_t kMaxQueryBytes = 4096;

asio::awaitable<Result<json::value>> search(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto query, rpc::required_string(*params, "query"));
  if (query.size() > kMaxQueryBytes) {
    Error e =
        invalid_param("'query' is " + std::to_string(query.size()) +
                          " bytes; a search request is at most " + std::to_string(kMaxQueryBytes),
                      "query", "maxBytes");
    e.data.as_object()["maxBytes"] = kMaxQueryBytes;
    co_return e;
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto limit, limit_param(*params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto explain, rpc::bool_param(*params, "explain"));
  // Off the I/O thread: a batch of a hundred such queries kept one busy for 0.7 s.
  std::function<json::value()> work = [&gateway, query = std::move(query), limit, explain] {
    return gateway.search(query, limit, explain);
  };
  co_return co_await gateway.blocking().run(work);
}

asio::awaitable<Result<json::value>> get(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, rpc::required_string(*params, "service"));
  co_return gateway.get(service);
}

asio::awaitable<Result<json::value>> list(Gateway& gateway, const Request& request) {
  HEARTH_CO_RETURN_IF_ERROR(rpc::params_object(request));
  co_return gateway.list();
}

asio::awaitable<Result<json::value>> execute(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  hearth::a2s::ExecuteParams p;
  HEARTH_CO_ASSIGN_OR_RETURN(p.service, rpc::required_string(*params, "service"));
  HEARTH_CO_ASSIGN_OR_RETURN(p.capability, rpc::required_string(*params, "capability"));
  const json::value variables = rpc::value_param(*params, "variables");
  if (!variables.is_null() && !variables.is_object()) {
    co_return rpc::invalid_param("variables must be an object of NAME: value", "variables", "type");
  }
  if (variables.is_object()) p.variables = variables.as_object();
  HEARTH_CO_ASSIGN_OR_RETURN(p.dry_run, rpc::bool_param(*params, "dryRun"));
  HEARTH_CO_ASSIGN_OR_RETURN(p.store, rpc::bool_param(*params, "store"));
  p.caller = caller_of(request).client;
  co_return co_await gateway.execute(std::move(p));
}

asio::awaitable<Result<json::value>> define(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  json::value definition = rpc::value_param(*params, "definition");
  if (!definition.is_object()) {
    co_return rpc::invalid_param("definition must be an A2S service definition (an object)",
                                 "definition", "type");
  }
  co_return co_await gateway.define(std::move(definition));
}

asio::awaitable<Result<json::value>> undefine(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto service, rpc::required_string(*params, "service"));
  co_return co_await gateway.undefine(std::string(service));
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Gateway& gateway) {
  auto bind = [&gateway](auto fn) {
    return [&gateway, fn](const Request& r) { return fn(gateway, r); };
  };
  dispatcher.add("registry/search", bind(search));
  dispatcher.add("registry/get", bind(get));
  dispatcher.add("registry/list", bind(list));
  dispatcher.add("registry/execute", bind(execute));
  dispatcher.add("registry/define", bind(define));
  dispatcher.add("registry/undefine", bind(undefine));
}

}  // namespace hearth::methods::registry
