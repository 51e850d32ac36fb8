#include "methods/vault/vault.hpp"

#include <boost/asio/awaitable.hpp>

#include "rpc/params.hpp"
#include "vault/vault.hpp"

namespace hearth::methods::vault {
namespace asio = boost::asio;
using hearth::a2s::Gateway;
using rpc::Request;

std::optional<std::pair<std::string, std::string>> split_variable(std::string_view text) {
  const auto at = text.rfind("::");
  if (at == std::string_view::npos || at == 0 || at + 2 >= text.size()) return std::nullopt;
  return std::make_pair(std::string(text.substr(0, at)), std::string(text.substr(at + 2)));
}

namespace {

/// scope and name, given as {"scope", "name"} or as {"variable": "SCOPE::NAME"}.
Result<std::pair<std::string, std::string>> variable_params(const json::object& params) {
  HEARTH_ASSIGN_OR_RETURN(auto variable, rpc::string_param(params, "variable", false));
  if (variable) {
    auto split = split_variable(*variable);
    if (!split) {
      return rpc::invalid_param("variable must be DOMAIN::NAME or global::NAME", "variable",
                                "format");
    }
    return *split;
  }
  HEARTH_ASSIGN_OR_RETURN(auto scope, rpc::required_string(params, "scope"));
  HEARTH_ASSIGN_OR_RETURN(auto name, rpc::required_string(params, "name"));
  return std::make_pair(std::move(scope), std::move(name));
}

Result<std::vector<std::string>> names_param(const json::object& params) {
  std::vector<std::string> names;
  const auto* v = params.if_contains("names");
  if (v == nullptr || v->is_null()) return names;
  if (!v->is_array()) {
    return rpc::invalid_param("names must be an array of variable names", "names", "type");
  }
  for (const auto& item : v->as_array()) {
    if (!item.is_string()) {
      return rpc::invalid_param("names must be an array of variable names", "names", "type");
    }
    names.emplace_back(item.as_string());
  }
  return names;
}

Result<std::shared_ptr<hearth::vault::Vault>> vault_of(Gateway& gateway) {
  auto vault = gateway.vault();
  if (!vault) {
    return Error::make(ErrorCode::kInternalError, "vault: this daemon has no vault (no state dir)");
  }
  return vault;
}

template <class T>
asio::awaitable<Result<T>> blocking(Gateway& gateway, std::function<Result<T>()> work) {
  co_return co_await gateway.blocking().run(work);
}

json::value entry_json(const hearth::vault::EntryInfo& e) {
  json::object o;
  o["scope"] = e.scope;
  o["name"] = e.name;
  o["variable"] = e.scope + "::" + e.name;
  o["updatedAt"] = e.updated_at;
  if (e.expires_at) o["expiresAt"] = *e.expires_at;
  o["size"] = e.size;
  return o;
}

asio::awaitable<Result<json::value>> vault_set(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto variable, variable_params(*params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto value, rpc::required_string(*params, "value"));
  std::optional<std::int64_t> expires_at;
  if (const auto* in = params->if_contains("expiresIn"); in != nullptr && !in->is_null()) {
    if (!in->is_int64() || in->as_int64() <= 0) {
      co_return rpc::invalid_param("expiresIn must be a positive number of seconds", "expiresIn",
                                   "range");
    }
    expires_at = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count() +
                 in->as_int64();
  }
  HEARTH_CO_ASSIGN_OR_RETURN(auto vault, vault_of(gateway));
  std::function<Result<json::value>()> work = [vault, variable, value,
                                               expires_at]() -> Result<json::value> {
    HEARTH_RETURN_IF_ERROR(vault->set(variable.first, variable.second, value, expires_at));
    json::object out;
    out["variable"] = variable.first + "::" + variable.second;
    out["stored"] = true;
    if (expires_at) out["expiresAt"] = *expires_at;
    return json::value(std::move(out));
  };
  co_return co_await blocking(gateway, work);
}

asio::awaitable<Result<json::value>> vault_list(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto scope, rpc::string_param(*params, "scope", false));
  HEARTH_CO_ASSIGN_OR_RETURN(auto vault, vault_of(gateway));
  std::function<Result<json::value>()> work = [vault, scope]() -> Result<json::value> {
    std::optional<std::string_view> filter;
    if (scope) filter = *scope;
    HEARTH_ASSIGN_OR_RETURN(auto entries, vault->list(filter));
    HEARTH_ASSIGN_OR_RETURN(auto grants, vault->grants(std::nullopt));
    json::array e;
    for (const auto& entry : entries) e.push_back(entry_json(entry));
    json::array g;
    for (const auto& grant : grants) {
      if (scope && *scope != "global" && grant.domain != *scope) continue;
      g.push_back(json::object{
          {"domain", grant.domain}, {"name", grant.name}, {"grantedAt", grant.granted_at}});
    }
    return json::value(json::object{{"entries", std::move(e)}, {"grants", std::move(g)}});
  };
  co_return co_await blocking(gateway, work);
}

asio::awaitable<Result<json::value>> vault_delete(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto variable, variable_params(*params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto vault, vault_of(gateway));
  std::function<Result<json::value>()> work = [vault, variable]() -> Result<json::value> {
    HEARTH_ASSIGN_OR_RETURN(bool deleted, vault->remove(variable.first, variable.second));
    return json::value(
        json::object{{"variable", variable.first + "::" + variable.second}, {"deleted", deleted}});
  };
  co_return co_await blocking(gateway, work);
}

asio::awaitable<Result<json::value>> vault_trust(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto domain, rpc::required_string(*params, "domain"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto names, names_param(*params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto vault, vault_of(gateway));
  std::function<Result<json::value>()> work = [vault, domain, names]() -> Result<json::value> {
    HEARTH_RETURN_IF_ERROR(vault->trust(domain, names));
    json::array granted;
    for (const auto& n : names) granted.push_back(json::string(n));
    if (names.empty()) granted.push_back("*");
    return json::value(json::object{{"domain", domain}, {"granted", std::move(granted)}});
  };
  co_return co_await blocking(gateway, work);
}

asio::awaitable<Result<json::value>> vault_revoke(Gateway& gateway, const Request& request) {
  HEARTH_CO_ASSIGN_OR_RETURN(const json::object* params, rpc::params_object(request));
  HEARTH_CO_ASSIGN_OR_RETURN(auto domain, rpc::required_string(*params, "domain"));
  HEARTH_CO_ASSIGN_OR_RETURN(auto names, names_param(*params));
  HEARTH_CO_ASSIGN_OR_RETURN(auto vault, vault_of(gateway));
  std::function<Result<json::value>()> work = [vault, domain, names]() -> Result<json::value> {
    HEARTH_ASSIGN_OR_RETURN(bool revoked, vault->revoke(domain, names));
    return json::value(json::object{{"domain", domain}, {"revoked", revoked}});
  };
  co_return co_await blocking(gateway, work);
}

}  // namespace

void add_methods(rpc::Dispatcher& dispatcher, Gateway& gateway) {
  auto bind = [&gateway](auto fn) {
    return [&gateway, fn](const Request& r) { return fn(gateway, r); };
  };
  dispatcher.add("vault/set", bind(vault_set));
  dispatcher.add("vault/list", bind(vault_list));
  dispatcher.add("vault/delete", bind(vault_delete));
  dispatcher.add("vault/trust", bind(vault_trust));
  dispatcher.add("vault/revoke", bind(vault_revoke));
}

}  // namespace hearth::methods::vault
