#include "a2s/exec/gateway.hpp"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>
#include <set>

#include "a2s/definition/jsonpath.hpp"
#include "a2s/exec/scrub.hpp"
#include "a2s/template/template.hpp"
#include "a2s/template/variables.hpp"
#include "common/ascii.hpp"
#include "common/strcat.hpp"
#include "egress/host.hpp"
#include "httpclient/client.hpp"
#include "vault/vault.hpp"

namespace hearth::a2s {
namespace asio = boost::asio;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(system_clock::now().time_since_epoch())
      .count();
}

std::string_view storage_name(Storage s) {
  switch (s) {
    case Storage::kService:
      return "service";
    case Storage::kGlobal:
      return "global";
    case Storage::kTemporary:
      return "temporary";
  }
  return "temporary";
}

std::string_view type_name(VarType t) {
  switch (t) {
    case VarType::kString:
      return "string";
    case VarType::kNumber:
      return "number";
    case VarType::kInteger:
      return "integer";
    case VarType::kBoolean:
      return "boolean";
    case VarType::kDate:
      return "date";
    case VarType::kObject:
      return "object";
    case VarType::kArray:
      return "array";
  }
  return "string";
}

/// The host of a domain ("localhost:8741" -> "localhost"), lower-cased.
std::string host_of(std::string_view domain) {
  std::string out;
  if (!domain.empty() && domain.front() == '[') {
    const auto close = domain.find(']');
    out = std::string(
        domain.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
  } else {
    out = std::string(domain.substr(0, domain.rfind(':')));
  }
  return ascii::lower(out);
}

using ascii::lower;

bool is_refresh(const Authentication& auth) {
  return lower(auth.type).find("refresh") != std::string::npos;
}

const Variable* find_var(const Variables& vars, std::string_view name) {
  for (const auto& v : vars) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

/// The response body as JSON when it says it is (or looks like) JSON, else its text.
json::value body_value(const httpclient::Response& response) {
  const auto type = lower(response.header("content-type").value_or(""));
  const bool jsonish =
      type.find("json") != std::string::npos ||
      (!response.body.empty() && (response.body.front() == '{' || response.body.front() == '['));
  if (jsonish) {
    auto parsed = json::parse_text(response.body);
    if (parsed.ok()) return std::move(parsed).value();
  }
  return json::string(response.body);
}

/// The response checked against the capability's responseSchema, when it names one that covers
/// this status: {schema, valid, violations: [{field, constraint, message}]}. A response that
/// does not match is still the service's answer (status "ok"); the caller decides.
std::optional<json::object> validate_response(const Definition& def, const Capability& cap,
                                              int status, const json::value& body) {
  if (cap.response_schema.empty()) return std::nullopt;
  std::string name = cap.response_schema;
  for (const std::string_view prefix : {"#/responseSchemas/", "#/components/schemas/"}) {
    if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  }
  auto it = def.compiled_schemas.find(name);
  if (it == def.compiled_schemas.end()) return std::nullopt;
  const auto& rs = it->second;
  if (!rs.status_codes.empty() &&
      std::find(rs.status_codes.begin(), rs.status_codes.end(), status) == rs.status_codes.end()) {
    return std::nullopt;
  }
  json::array violations;
  if (rs.format.find("json") != std::string::npos && body.is_string()) {
    violations.push_back(json::object{
        {"field", ""}, {"constraint", "format"}, {"message", "the response is not JSON"}});
  } else {
    if (rs.schema) {
      for (const auto& v : rs.schema->validate(body)) {
        violations.push_back(
            json::object{{"field", v.field}, {"constraint", v.constraint}, {"message", v.message}});
      }
    }
    for (const auto& field : rs.required) {
      if (!body.is_object() || !body.get_object().contains(field)) {
        violations.push_back(json::object{{"field", field},
                                          {"constraint", "required"},
                                          {"message", "'" + field + "' is required"}});
      }
    }
  }
  json::object out;
  out["schema"] = name;
  out["valid"] = violations.empty();
  out["violations"] = std::move(violations);
  return out;
}

/// The variables a call may give, by name: the capability's, and its authentications' inputs.
using Declared = std::map<std::string, const Variable*, std::less<>>;

Declared declared_variables(const Definition& def, const Capability& cap) {
  Declared declared;
  for (const auto* vars : {&cap.input, &cap.temp}) {
    for (const auto& v : *vars) declared.emplace(v.name, &v);
  }
  for (const auto& auth : def.authentications) {
    for (const auto& v : auth.input) declared.emplace(v.name, &v);
  }
  return declared;
}

/// The capability `name` of `def`: spelled exactly, else in another case.
Result<const Capability*> find_capability(const Definition& def, std::string_view name) {
  const Capability* cap = nullptr;
  for (const auto& c : def.capabilities) {
    if (c.name == name) cap = &c;
  }
  for (const auto& c : def.capabilities) {
    if (cap == nullptr && ascii::iequals(c.name, name)) cap = &c;
  }
  if (cap != nullptr) return cap;
  json::array names;
  for (const auto& c : def.capabilities) names.push_back(json::string(c.name));
  return Error::make(
      ErrorCode::kInvalidParams,
      "registry: " + def.service_name + " has no capability '" + std::string(name) + "'",
      json::object{{"capabilities", names}});
}

/// The variables a call gives, each checked against its declaration and in its typed form.
Result<json::object> typed_variables(const json::object& given, const Declared& declared,
                                     const Definition& def, const Capability& cap) {
  json::object typed;
  for (const auto& [name, value] : given) {
    auto it = declared.find(std::string_view(name));
    if (it == declared.end()) {
      json::array names;
      for (const auto& [n, v] : declared) names.push_back(json::string(n));
      return Error::make(
          ErrorCode::kInvalidParams,
          std::string(name) + ": not a variable of " + def.service_name + " / " + cap.name,
          json::object{{"variables", names}});
    }
    auto checked = check_value(*it->second, value);
    if (!checked.ok()) return std::move(checked).error();
    typed[name] = std::move(checked).value();
  }
  return typed;
}

}  // namespace

/// An auth flow in progress: callers that need the same tokens wait for it instead of starting
/// their own (single flight). The channel is closed when the flow is over.
struct Gateway::Flight {
  explicit Flight(const asio::any_io_executor& ex) : done(ex) {}
  asio::experimental::concurrent_channel<void(boost::system::error_code)> done;
  std::optional<Error> error;          ///< the flow failed outright
  std::optional<json::value> outcome;  ///< a result to pass on (needs_input, failed)
};

struct WatchState {
  std::mutex mutex;
  bool stopped = false;
  std::shared_ptr<asio::steady_timer> timer;
};

/// One execution: the values it resolved and the secrets among them.
struct Gateway::Call {
  Gateway& gw;
  std::shared_ptr<const Definition> def;
  const ExecuteParams& params;
  std::map<std::string, json::value, std::less<>> values;  ///< name -> typed value
  std::set<std::string, std::less<>> from_auth;            ///< names an auth flow produced
  Scrubber scrub;
  json::array missing;
  bool local = false;
  bool plain_http = false;

  Call(Gateway& g, std::shared_ptr<const Definition> d, const ExecuteParams& p)
      : gw(g), def(std::move(d)), params(p) {
    for (const auto& entry : gw.options_.local_domains) {
      std::string_view e = entry;
      bool http = true;
      if (e.substr(0, 8) == "https://") {
        e.remove_prefix(8);
        http = false;
      } else if (e.substr(0, 7) == "http://") {
        e.remove_prefix(7);
      }
      if (ascii::iequals(e, def->domain)) {
        local = true;
        plain_http = http;
      }
    }
  }

  std::string scoped(std::string_view name, Storage storage) const {
    return (storage == Storage::kGlobal ? std::string("global") : def->domain) +
           "::" + std::string(name);
  }

  void add_missing(const Variable& var, std::string_view reason) {
    for (const auto& m : missing) {
      if (m.as_object().at("name").as_string() == var.name) return;
    }
    json::object m;
    m["name"] = var.name;
    m["description"] = var.description;
    m["type"] = type_name(var.type);
    m["storage"] = storage_name(var.storage);
    m["reason"] = reason;
    if (var.format) m["format"] = *var.format;
    if (var.pattern) m["pattern"] = *var.pattern;
    if (var.storage != Storage::kTemporary) {
      m["variable"] = scoped(var.name, var.storage);
      const std::string scope = var.storage == Storage::kGlobal ? "global" : def->domain;
      m["set"] = "hearth vault set " + scope + " " + var.name;
      if (var.storage == Storage::kGlobal && reason == "untrusted") {
        m["trust"] = "hearth vault trust " + def->domain + " " + var.name;
      }
    }
    missing.push_back(std::move(m));
  }

  /// Reads `var` from the vault (service or global scope). A value that no longer checks
  /// against its variable is treated as absent (the definition changed its rules).
  asio::awaitable<Result<std::optional<json::value>>> read_vault(const Variable& var) {
    if (!gw.vault_ || var.storage == Storage::kTemporary) co_return std::optional<json::value>{};
    auto vault = gw.vault_;
    const std::string domain = def->domain;
    const std::string name = var.name;
    const bool global = var.storage == Storage::kGlobal;
    std::function<Result<std::optional<vault::Secret>>()> read = [vault, domain, name, global] {
      return global ? vault->get_global_for(domain, name) : vault->get(domain, name);
    };
    auto secret = co_await gw.blocking_.run(read);
    if (!secret.ok()) {
      if (global && json::string_member(secret.error().data, "reason") == "not-trusted") {
        // Optional ones are simply left out; a required one is what the user must decide.
        if (!var.optional) add_missing(var, "untrusted");
        co_return std::optional<json::value>{};
      }
      co_return std::move(secret).error();
    }
    if (!secret.value()) co_return std::optional<json::value>{};
    scrub.add(secret.value()->value, scoped(var.name, var.storage));
    auto checked = check_value(var, json::string(secret.value()->value));
    if (!checked.ok()) {
      spdlog::warn("a2s: {} in the vault no longer checks against {}: {}",
                   scoped(var.name, var.storage), def->service_name, checked.error().message);
      co_return std::optional<json::value>{};
    }
    co_return std::optional<json::value>(std::move(checked).value());
  }

  /// Stores a given service/global value (`store`: true).
  asio::awaitable<Status> store_value(const Variable& var, const json::value& value) {
    if (!gw.vault_) co_return Error::make(ErrorCode::kInternalError, "no vault (no state dir)");
    auto vault = gw.vault_;
    const std::string scope = var.storage == Storage::kGlobal ? "global" : def->domain;
    const std::string name = var.name;
    const std::string text = text_of(value);
    std::optional<std::int64_t> expires;
    if (var.expiry_seconds) expires = unix_now() + *var.expiry_seconds;
    std::function<Status()> write = [vault, scope, name, text, expires] {
      return vault->set(scope, name, text, expires);
    };
    co_return co_await gw.blocking_.run(write);
  }

  /// Resolves a variable of the call: given, then the vault, then its default. Missing
  /// required ones are listed; returns an error only for failures (a tampered vault row).
  asio::awaitable<Status> resolve(const Variable& var) {
    if (values.count(var.name) != 0) co_return Status{};
    if (const auto* given = params.variables.if_contains(var.name)) {
      if (var.storage != Storage::kTemporary) {
        scrub.add(text_of(*given), scoped(var.name, var.storage));
      }
      values.emplace(var.name, *given);
      co_return Status{};
    }
    auto stored = co_await read_vault(var);
    if (!stored.ok()) co_return std::move(stored).error();
    if (*stored) {
      values.emplace(var.name, std::move(**stored));
      co_return Status{};
    }
    if (var.default_value) {
      values.emplace(var.name, *var.default_value);
      co_return Status{};
    }
    co_return Status{};
  }

  /// The authentications that produce `name`: refresh flows first, then in definition order.
  std::vector<std::size_t> producers_of(std::string_view name) const {
    std::vector<std::size_t> out;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < def->authentications.size(); ++i) {
        const auto& auth = def->authentications[i];
        if (is_refresh(auth) != (pass == 0)) continue;
        if (find_var(auth.output, name) != nullptr) out.push_back(i);
      }
    }
    return out;
  }

  asio::awaitable<Result<httpclient::Response>> send(const Template& tmpl,
                                                     const FilledRequest& filled) {
    const auto wait = gw.limiter_.acquire(
        def->domain, def->rate_limit, steady_clock::now(),
        std::chrono::duration_cast<steady_clock::duration>(gw.options_.max_rate_wait));
    if (!wait.granted) {
      const auto seconds = std::chrono::duration<double>(wait.wait).count();
      co_return Error::make(ErrorCode::kTimeout, "rate limited",
                            json::object{{"rateLimited", true}, {"retryAfter", seconds}});
    }
    if (wait.wait > steady_clock::duration::zero()) {
      asio::steady_timer timer(co_await asio::this_coro::executor, wait.wait);
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    httpclient::Request request;
    request.method = filled.method;
    request.url = std::string(plain_http ? "http://" : "https://") + def->domain + filled.target;
    request.headers = filled.headers;
    if (!filled.body.empty() || filled.method == "POST" || filled.method == "PUT" ||
        filled.method == "PATCH") {
      request.body = filled.body;
    }
    request.timeout = gw.options_.timeout;
    request.max_response_bytes = gw.options_.max_response_bytes;
    request.max_redirects = 0;  // a redirect is an answer: following it could leave the domain
    const std::string host = host_of(def->domain);
    const bool allow_local = local;
    request.allow = [host, allow_local](
                        const httpclient::Url& url,
                        const std::vector<std::string>& addresses) -> std::optional<Error> {
      if (url.host != host) {
        return Error::make(ErrorCode::kPermissionDenied,
                           "a2s: " + url.host + " is not the service's domain");
      }
      if (allow_local) return std::nullopt;
      for (const auto& text : addresses) {
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(text, ec);
        if (ec || egress::is_local_address(address)) {
          return Error::make(ErrorCode::kPermissionDenied,
                             strcat("a2s: ", host, " resolves to a local address (", text,
                                    "); only local test domains may (--local-domain)"));
        }
      }
      return std::nullopt;
    };
    (void)tmpl;
    auto response = co_await gw.client_->request(std::move(request));
    if (response.ok() && (response->status == 429 || response->status == 503)) {
      if (auto after = response->header("retry-after")) {
        if (auto seconds = parse_retry_after(*after, system_clock::now())) {
          gw.limiter_.pause(def->domain, steady_clock::now() + *seconds);
        }
      }
    }
    co_return response;
  }

  /// The errorPattern a failed response matches, as the result's `error` member.
  json::object match_error(const httpclient::Response& response) {
    json::object out;
    out["httpStatus"] = response.status;
    for (const auto& pattern : def->error_patterns) {
      if (pattern.status_code != response.status) continue;
      RE2 re(pattern.pattern, RE2::Quiet);
      if (!re.ok() || !RE2::PartialMatch(response.body, re)) continue;
      out["pattern"] = pattern.pattern;
      if (!pattern.resolution.empty()) out["resolution"] = pattern.resolution;
      out["retry"] = pattern.retry;
      if (pattern.retry_after_seconds) {
        out["retryAfter"] = *pattern.retry_after_seconds;
        if (pattern.retry) {
          gw.limiter_.pause(def->domain,
                            steady_clock::now() +
                                std::chrono::duration_cast<steady_clock::duration>(
                                    std::chrono::duration<double>(*pattern.retry_after_seconds)));
        }
      }
      break;
    }
    if (auto after = response.header("retry-after")) {
      if (auto seconds = parse_retry_after(*after, system_clock::now())) {
        out["retryAfter"] = static_cast<double>(seconds->count());
        if (!out.contains("retry")) out["retry"] = true;
      }
    }
    return out;
  }

  /// Applies a response mapping: output variables of `outputs` stored (service and global
  /// storage) or kept for the answer (temporary). Returns the names stored and the temporary
  /// values.
  asio::awaitable<Result<json::object>> apply_mapping(const ResponseMapping& mapping,
                                                      const Variables& outputs,
                                                      const json::value& body, bool secret) {
    std::map<std::string, json::value> got;
    std::map<std::string, std::int64_t> lifetimes;
    for (const auto& [path, name] : mapping) {
      const json::value* found = select(body, path);
      if (found == nullptr || found->is_null()) continue;
      if (name.size() > 7 && name.substr(name.size() - 7) == "_EXPIRY" &&
          find_var(outputs, name.substr(0, name.size() - 7)) != nullptr &&
          find_var(outputs, name) == nullptr) {
        if (found->is_number()) {
          lifetimes[name.substr(0, name.size() - 7)] =
              static_cast<std::int64_t>(found->to_number<double>());
        } else if (found->is_string()) {
          lifetimes[name.substr(0, name.size() - 7)] =
              std::atoll(std::string(found->get_string()).c_str());
        }
        continue;
      }
      got[name] = *found;
    }
    json::object kept;
    json::array stored;
    for (const auto& [name, value] : got) {
      const Variable* var = find_var(outputs, name);
      if (var == nullptr) continue;
      auto checked = check_value(*var, value);
      if (!checked.ok()) {
        co_return Error::make(ErrorCode::kHandlerError, "a2s: the response does not give a valid " +
                                                            name + ": " + checked.error().message);
      }
      values[name] = checked.value();
      if (secret || var->storage != Storage::kTemporary) {
        scrub.add(text_of(checked.value()), scoped(name, var->storage));
      }
      if (var->storage == Storage::kTemporary) {
        kept[name] = checked.value();
        continue;
      }
      std::optional<std::int64_t> lifetime;
      if (auto it = lifetimes.find(name); it != lifetimes.end()) lifetime = it->second;
      if (!lifetime && var->expiry_seconds) lifetime = var->expiry_seconds;
      std::optional<std::int64_t> expires;
      if (lifetime) {
        // Refreshed ahead of expiry: a quarter of its life, at most 30 s, before the server's.
        const std::int64_t ahead = std::min<std::int64_t>(30, *lifetime / 4);
        expires = unix_now() + *lifetime - ahead;
      }
      if (!gw.vault_) continue;
      auto vault = gw.vault_;
      const std::string scope = var->storage == Storage::kGlobal ? "global" : def->domain;
      const std::string text = text_of(checked.value());
      std::function<Status()> write = [vault, scope, name = name, text, expires] {
        return vault->set(scope, name, text, expires);
      };
      auto written = co_await gw.blocking_.run(write);
      if (!written.ok()) co_return std::move(written).error();
      stored.push_back(json::string(strcat(scope, "::", name)));
    }
    json::object out;
    if (!kept.empty()) out["outputs"] = std::move(kept);
    if (!stored.empty()) out["stored"] = std::move(stored);
    co_return out;
  }

  /// Runs authentication `index` (the caller holds the flight). An outcome (needs_input,
  /// failed) is returned as a value for the call to answer with.
  asio::awaitable<Result<std::optional<json::value>>> run_auth(std::size_t index) {
    const auto& auth = def->authentications[index];
    for (const auto& var : auth.input) {
      auto resolved = co_await resolve(var);
      if (!resolved.ok()) co_return std::move(resolved).error();
      if (values.count(var.name) == 0 && !var.optional) add_missing(var, "missing");
    }
    if (!missing.empty()) co_return std::optional<json::value>{};
    auto tmpl = parse_template(auth.request);
    if (!tmpl.ok()) co_return std::move(tmpl).error();
    auto filled = fill(tmpl.value(), lookup());
    if (!filled.ok()) co_return std::move(filled).error();
    auto response = co_await send(tmpl.value(), filled.value());
    AuditEntry entry{def->service_name, auth.type, "a2s/auth", "ok", {}};
    if (!response.ok()) {
      entry.outcome = "error";
      entry.detail["message"] = scrub.apply(response.error().message);
      if (gw.audit_) gw.audit_(entry);
      co_return std::move(response).error();
    }
    entry.detail["httpStatus"] = response->status;
    if (response->status < 200 || response->status > 299) {
      entry.outcome = "failed";
      if (gw.audit_) gw.audit_(entry);
      json::object result;
      result["status"] = "failed";
      result["stage"] = "authentication";
      result["authentication"] = auth.type;
      result["error"] = match_error(response.value());
      result["body"] = scrub.apply_json(body_value(response.value()));
      co_return std::optional<json::value>(json::value(std::move(result)));
    }
    const json::value body = body_value(response.value());
    auto mapped = co_await apply_mapping(auth.response_mapping, auth.output, body, true);
    if (!mapped.ok()) {
      entry.outcome = "error";
      if (gw.audit_) gw.audit_(entry);
      co_return std::move(mapped).error();
    }
    for (const auto& out : auth.output) from_auth.insert(out.name);
    if (gw.audit_) gw.audit_(entry);
    co_return std::optional<json::value>{};
  }

  /// Runs the authentications that produce `var` (the caller leads its flight), in order, until
  /// one gives it or an outcome ends the call; lists `var` as missing when none could.
  asio::awaitable<Result<std::optional<json::value>>> run_producers(const Variable& var) {
    const auto producers = producers_of(var.name);
    Result<std::optional<json::value>> result = std::optional<json::value>{};
    std::size_t tried = 0;
    for (std::size_t index : producers) {
      const auto& auth = def->authentications[index];
      // A refresh flow runs only when its inputs (the refresh token) are all there.
      json::array before = missing;
      if (is_refresh(auth)) {
        bool ready = true;
        for (const auto& in : auth.input) {
          auto r = co_await resolve(in);
          if (!r.ok()) {
            result = std::move(r).error();
            break;
          }
          if (values.count(in.name) == 0 && !in.optional) ready = false;
        }
        if (!result.ok()) break;
        if (!ready) continue;
      }
      ++tried;
      result = co_await run_auth(index);
      if (!result.ok()) break;
      if (values.count(var.name) != 0) {
        result = std::optional<json::value>{};
        break;
      }
      if (is_refresh(auth) && result.value()) {
        // A refused refresh token is dropped; the next flow (client credentials) runs.
        for (const auto& in : auth.input) {
          if (in.storage != Storage::kTemporary) {
            co_await forget(in);
          }
        }
        missing = before;
        result = std::optional<json::value>{};
        continue;
      }
      if (result.value() || !missing.empty()) break;
    }
    if (result.ok() && !result.value() && values.count(var.name) == 0 && missing.empty()) {
      if (tried == 0 && !producers.empty()) {
        // Only refresh flows produce it and none had a refresh token.
        add_missing(var, "missing");
      } else {
        add_missing(var, producers.empty() ? "missing" : "not produced by authentication");
      }
    }
    co_return result;
  }

  /// Makes sure `name` (an output of an authentication) has a value: from the vault when it is
  /// there and fresh, else by running an authentication, once for all concurrent callers.
  asio::awaitable<Result<std::optional<json::value>>> ensure_auth_output(const Variable& var,
                                                                         bool force) {
    if (!force) {
      auto resolved = co_await resolve(var);
      if (!resolved.ok()) co_return std::move(resolved).error();
      if (values.count(var.name) != 0) co_return std::optional<json::value>{};
    } else {
      values.erase(var.name);
    }
    const std::string key = def->domain + "\n" + var.name;
    std::shared_ptr<Flight> flight;
    bool leader = false;
    {
      std::lock_guard lock(gw.flights_mutex_);
      auto& slot = gw.flights_[key];
      if (!slot) {
        slot = std::make_shared<Flight>(gw.executor_);
        leader = true;
      }
      flight = slot;
    }
    if (!leader) {
      // Wait for the flow in progress, then read what it stored.
      co_await flight->done.async_receive(asio::as_tuple(asio::use_awaitable));
      if (flight->error) co_return *flight->error;
      if (flight->outcome) co_return std::optional<json::value>(*flight->outcome);
      values.erase(var.name);
      auto resolved = co_await resolve(var);
      if (!resolved.ok()) co_return std::move(resolved).error();
      if (values.count(var.name) == 0) add_missing(var, "missing");
      co_return std::optional<json::value>{};
    }
    Result<std::optional<json::value>> result = std::optional<json::value>{};
    bool fresh = false;
    if (force) {
      // The service refused the token: forget it so that nobody uses it again.
      co_await forget(var);
    } else {
      // Another flight may have ended between this call's own look above and its becoming the
      // leader: what that flight stored is fresh, and a second flow would be one too many.
      values.erase(var.name);
      auto again = co_await resolve(var);
      if (!again.ok()) {
        result = std::move(again).error();
      } else {
        fresh = values.count(var.name) != 0;
      }
    }
    if (!fresh && result.ok()) {
      result = co_await run_producers(var);
    }
    {
      std::lock_guard lock(gw.flights_mutex_);
      gw.flights_.erase(key);
    }
    if (!result.ok()) {
      flight->error = result.error();
    } else if (result.value()) {
      flight->outcome = *result.value();
    } else if (!missing.empty()) {
      flight->outcome = needs_input(params.capability);
    }
    flight->done.close();
    co_return result;
  }

  /// The values resolved so far, as fill() looks them up.
  Lookup lookup() const {
    return [this](std::string_view name) -> const json::value* {
      auto it = values.find(name);
      return it == values.end() ? nullptr : &it->second;
    };
  }

  /// The answer that asks for the variables listed in `missing`.
  json::value needs_input(std::string_view capability) const {
    json::object needs;
    needs["status"] = "needs_input";
    needs["service"] = def->service_name;
    needs["capability"] = capability;
    needs["missing"] = missing;
    return needs;
  }

  /// Stores the service and global values the call gives (`store`: true).
  asio::awaitable<Status> store_given(const Declared& declared) {
    for (const auto& [name, value] : params.variables) {
      const Variable* var = declared.at(std::string(name));
      if (var->storage == Storage::kTemporary) continue;
      auto stored = co_await store_value(*var, value);
      if (!stored.ok()) co_return stored;
    }
    co_return Status{};
  }

  /// Resolves what the request of `cap` needs: the capability's own variables and the service
  /// variables `tmpl` uses without declaring them. Required ones without a value are listed as
  /// missing. Returns the variables authentications produce for the call, left for
  /// prepare_authentication.
  asio::awaitable<Result<std::vector<Variable>>> resolve_variables(const Capability& cap,
                                                                   const Template& tmpl,
                                                                   const Declared& declared) {
    for (const auto* vars : {&cap.input, &cap.temp}) {
      for (const auto& var : *vars) {
        if (!producers_of(var.name).empty()) continue;
        auto r = co_await resolve(var);
        if (!r.ok()) co_return std::move(r).error();
        if (values.count(var.name) == 0 && !var.optional) add_missing(var, "missing");
      }
    }
    std::vector<Variable> auth_vars;
    for (const auto& name : tmpl.placeholders) {
      if (producers_of(name).empty()) {
        if (declared.count(name) == 0 && values.count(name) == 0) {
          // A service variable the template uses without the capability declaring it.
          Variable var;
          var.name = name;
          var.storage = Storage::kService;
          auto r = co_await resolve(var);
          if (!r.ok()) co_return std::move(r).error();
        }
        continue;
      }
      const Variable* var = find_var(cap.input, name);
      for (const auto& auth : def->authentications) {
        if (var == nullptr) var = find_var(auth.output, name);
      }
      if (var != nullptr) auth_vars.push_back(*var);
    }
    co_return auth_vars;
  }

  /// Makes sure every one of `auth_vars` has a value, running authentications when nothing is
  /// missing (a dry run only reads what is stored). An outcome (needs_input, failed) is
  /// returned as a value for the call to answer with.
  asio::awaitable<Result<std::optional<json::value>>> prepare_authentication(
      const std::vector<Variable>& auth_vars, bool dry_run) {
    if (dry_run) {
      for (const auto& var : auth_vars) {
        auto r = co_await resolve(var);
        if (!r.ok()) co_return std::move(r).error();
      }
    } else if (missing.empty()) {
      for (const auto& var : auth_vars) {
        auto outcome = co_await ensure_auth_output(var, false);
        if (!outcome.ok() || outcome.value()) co_return outcome;
      }
    }
    co_return std::optional<json::value>{};
  }

  /// The answer to a dry run: the request as it would be sent, secrets scrubbed, and the
  /// authentication outputs it would have to get first.
  json::value dry_run_answer(const Capability& cap, const FilledRequest& filled,
                             const std::vector<Variable>& auth_vars) {
    json::object request;
    request["method"] = filled.method;
    request["url"] = std::string(plain_http ? "http://" : "https://") + def->domain + filled.target;
    json::object headers;
    for (const auto& [k, v] : filled.headers) headers[k] = v;
    request["headers"] = std::move(headers);
    if (!filled.body.empty()) request["body"] = filled.body;
    json::object out;
    out["status"] = "dry_run";
    out["service"] = def->service_name;
    out["capability"] = cap.name;
    out["request"] = scrub.apply_json(json::value(std::move(request)));
    json::array pending;
    for (const auto& var : auth_vars) {
      if (values.count(var.name) == 0) pending.push_back(json::string(var.name));
    }
    if (!pending.empty()) out["authenticationFirst"] = std::move(pending);
    return out;
  }

  /// Sends the request; when the service refuses with 401 a token the vault still held
  /// (revoked, or expired early), gets new ones once and sends it again.
  asio::awaitable<Result<httpclient::Response>> send_renewing_auth(
      const Template& tmpl, const FilledRequest& filled, const std::vector<Variable>& auth_vars) {
    auto response = co_await send(tmpl, filled);
    bool fresh = false;
    for (const auto& var : auth_vars) fresh = fresh || from_auth.count(var.name) != 0;
    if (!response.ok() || response->status != 401 || auth_vars.empty() || fresh) {
      co_return response;
    }
    for (const auto& var : auth_vars) {
      auto outcome = co_await ensure_auth_output(var, true);
      if (!outcome.ok() || outcome.value()) break;
    }
    bool all = true;
    for (const auto& var : auth_vars) all = all && values.count(var.name) != 0;
    if (all) {
      auto refilled = fill(tmpl, lookup());
      if (refilled.ok()) {
        response = co_await send(tmpl, refilled.value());
      }
    }
    co_return response;
  }

  /// The answer to a response of the service (not yet scrubbed): "ok" with the mapped outputs
  /// and the response schema's verdict, or "failed" with the errorPattern it matches.
  asio::awaitable<Result<json::object>> answer(const Capability& cap,
                                               const httpclient::Response& response) {
    json::object out;
    const bool ok = response.status >= 200 && response.status <= 299;
    out["status"] = ok ? "ok" : "failed";
    out["service"] = def->service_name;
    out["capability"] = cap.name;
    out["httpStatus"] = response.status;
    json::object headers;
    for (const auto& [k, v] : response.headers) {
      if (k == "set-cookie") continue;  // session cookies stay with the daemon
      if (auto* existing = headers.if_contains(k)) {
        *existing = json::string(std::string(existing->as_string()) + ", " + v);
      } else {
        headers[k] = v;
      }
    }
    out["headers"] = std::move(headers);
    const json::value body = body_value(response);
    if (ok) {
      auto mapped = co_await apply_mapping(cap.response_mapping, cap.output, body, false);
      if (!mapped.ok()) co_return std::move(mapped).error();
      for (auto& [k, v] : mapped.value()) out[k] = std::move(v);
      if (auto validation = validate_response(*def, cap, response.status, body)) {
        out["validation"] = std::move(*validation);
      }
    } else {
      out["error"] = match_error(response);
    }
    out["body"] = body;
    co_return out;
  }

  asio::awaitable<void> forget(const Variable& var) {
    values.erase(var.name);
    if (!gw.vault_ || var.storage == Storage::kTemporary) co_return;
    auto vault = gw.vault_;
    const std::string scope = var.storage == Storage::kGlobal ? "global" : def->domain;
    const std::string name = var.name;
    std::function<Status()> drop = [vault, scope, name]() -> Status {
      auto removed = vault->remove(scope, name);
      if (!removed.ok()) return std::move(removed).error();
      return Status{};
    };
    auto dropped = co_await gw.blocking_.run(drop);
    if (!dropped.ok()) {
      spdlog::warn("a2s: could not forget {}::{}: {}", scope, name, dropped.error().message);
    }
  }
};

Gateway::Gateway(asio::any_io_executor executor, GatewayOptions options,
                 std::shared_ptr<vault::Vault> vault, std::shared_ptr<httpclient::Client> client)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      vault_(std::move(vault)),
      client_(std::move(client)),
      catalog_(options_.registry_dirs),
      watch_(std::make_shared<WatchState>()) {
  if (!options_.stored || !options_.engine || !options_.engine->shared()) return;
  alive_ = std::make_shared<Alive>();
  alive_->gateway = this;
  std::weak_ptr<Alive> weak = alive_;
  // Another daemon added or removed a definition (or the bus was away): read them again, on
  // the blocking thread.
  auto reread = [weak] {
    auto a = weak.lock();
    if (!a) return;
    std::lock_guard lock(a->mu);
    if (a->gateway == nullptr) return;
    a->gateway->blocking_.post([weak] {
      auto again = weak.lock();
      if (!again) return;
      std::lock_guard inner(again->mu);
      if (again->gateway == nullptr) return;
      if (auto st = again->gateway->reload_stored(); !st.ok()) {
        spdlog::warn("registry: reading the stored definitions: {}", st.error().message);
      }
    });
  };
  notices_ =
      options_.engine->bus().subscribe("registry", [reread](const storage::Notice&) { reread(); });
  resyncs_ = options_.engine->bus().on_resync(reread);
}

Gateway::~Gateway() {
  stop();
}

void Gateway::load() {
  if (options_.stored) {
    if (auto st = reload_stored(); !st.ok()) {
      spdlog::error("registry: the stored definitions cannot be read: {}", st.error().message);
      catalog_.load();
    }
    return;
  }
  catalog_.load();
}

Status Gateway::reload_stored() {
  HEARTH_ASSIGN_OR_RETURN(auto all, options_.stored->all());
  catalog_.set_stored(std::move(all));
  return {};
}

asio::awaitable<Result<json::value>> Gateway::define(json::value document) {
  if (!options_.stored) {
    co_return Error::make(ErrorCode::kInternalError,
                          "registry/define: this daemon keeps no definitions of its own");
  }
  Problems problems;
  auto definition = parse_definition(document, problems);
  if (!definition) {
    std::string message = "the definition has problems:";
    json::array list;
    for (const auto& p : problems) {
      message += "\n  " + p.to_string();
      list.push_back(json::object{{"path", p.path}, {"message", p.message}});
    }
    co_return Error::make(ErrorCode::kInvalidParams, std::move(message),
                          json::object{{"problems", std::move(list)}});
  }
  const std::string service = definition->service_name;
  const auto snap = catalog_.snapshot();
  if (auto existing = snap->find(service); existing != nullptr &&
                                           existing->service_name == service &&
                                           existing->source != Catalog::stored_source(service)) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "'" + service + "' is defined by " + existing->source +
                              ": change that file, or give this definition another serviceName",
                          json::object{{"serviceName", service}, {"source", existing->source}});
  }
  const bool replaced = snap->find(service) != nullptr;
  auto stored = options_.stored;
  auto engine = options_.engine;
  std::function<Status()> put = [this, stored, engine, service,
                                 text = json::serialize(document)]() -> Status {
    HEARTH_RETURN_IF_ERROR(stored->put(service, text));
    HEARTH_RETURN_IF_ERROR(reload_stored());
    if (engine && engine->shared()) {
      if (auto told = engine->bus().publish(
              "registry", json::serialize(json::object{{"serviceName", service}}));
          !told.ok()) {
        spdlog::warn("registry: telling the other daemons: {}", told.error().message);
      }
    }
    return {};
  };
  auto st = co_await blocking_.run(put);
  if (!st.ok()) co_return st.error();
  co_return json::value(json::object{{"serviceName", service}, {"replaced", replaced}});
}

asio::awaitable<Result<json::value>> Gateway::undefine(std::string service) {
  if (!options_.stored) {
    co_return Error::make(ErrorCode::kInternalError,
                          "registry/undefine: this daemon keeps no definitions of its own");
  }
  const auto snap = catalog_.snapshot();
  if (auto existing = snap->find(service);
      existing != nullptr && existing->source != Catalog::stored_source(existing->service_name)) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "'" + service + "' is defined by " + existing->source +
                              ", not through the daemon: remove that file instead",
                          json::object{{"serviceName", service}, {"source", existing->source}});
  }
  auto stored = options_.stored;
  auto engine = options_.engine;
  std::function<Result<bool>()> remove = [this, stored, engine, service]() -> Result<bool> {
    HEARTH_ASSIGN_OR_RETURN(const bool removed, stored->remove(service));
    HEARTH_RETURN_IF_ERROR(reload_stored());
    if (removed && engine && engine->shared()) {
      if (auto told = engine->bus().publish(
              "registry", json::serialize(json::object{{"serviceName", service}}));
          !told.ok()) {
        spdlog::warn("registry: telling the other daemons: {}", told.error().message);
      }
    }
    return removed;
  };
  auto removed = co_await blocking_.run(remove);
  if (!removed.ok()) co_return removed.error();
  if (!removed.value()) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "no definition of '" + service + "' was added through the daemon",
                          json::object{{"serviceName", service}});
  }
  co_return json::value(json::object{{"serviceName", service}, {"removed", true}});
}

bool Gateway::reload_if_changed() {
  return catalog_.reload_if_changed();
}

void Gateway::start_watching(std::chrono::milliseconds interval) {
  auto state = watch_;
  {
    std::lock_guard lock(state->mutex);
    if (state->timer) return;
    state->timer = std::make_shared<asio::steady_timer>(executor_);
  }
  // Each tick runs the check on the blocking thread, then arms the next one.
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [this, state, interval, weak = std::weak_ptr<std::function<void()>>(tick)] {
    std::lock_guard lock(state->mutex);
    if (state->stopped) return;
    state->timer->expires_after(interval);
    state->timer->async_wait([this, state, weak](boost::system::error_code ec) {
      if (ec) return;
      blocking_.post([this, state, weak] {
        {
          std::lock_guard held(state->mutex);
          if (state->stopped) return;
        }
        if (catalog_.reload_if_changed()) {
          const auto snap = catalog_.snapshot();
          spdlog::info("registry: reloaded: {} services, {} files refused",
                       snap->definitions.size(), snap->failures.size());
          for (const auto& failure : snap->failures) {
            for (const auto& problem : failure.problems) {
              spdlog::warn("registry: {}: {}", failure.file.string(), problem.to_string());
            }
          }
        }
        if (auto next = weak.lock()) (*next)();
      });
    });
  };
  watch_tick_ = tick;
  (*tick)();
}

void Gateway::stop() {
  if (alive_) {
    options_.engine->bus().unsubscribe(notices_);
    options_.engine->bus().unsubscribe(resyncs_);
    std::lock_guard lock(alive_->mu);
    alive_->gateway = nullptr;
  }
  {
    std::lock_guard lock(watch_->mutex);
    watch_->stopped = true;
    if (watch_->timer) watch_->timer->cancel();
  }
  blocking_.join();
  watch_tick_.reset();
}

json::value Gateway::search(std::string_view query, std::size_t limit, bool explain) const {
  const auto snap = catalog_.snapshot();
  SearchOptions options;
  options.limit = limit;
  options.explain = explain;
  json::value response = registry_response(snap->index->search(query, options));
  if (explain) {
    response.as_object()["explanation"] = query_explanation(snap->index->interpret(query));
  }
  return response;
}

Result<json::value> Gateway::get(std::string_view service) const {
  const auto snap = catalog_.snapshot();
  auto def = snap->find(service);
  if (!def) {
    return Error::make(ErrorCode::kInvalidParams,
                       "registry: no service '" + std::string(service) + "'");
  }
  json::object out;
  out["service"] = def->service_name;
  out["source"] = def->source;
  out["definition"] = def->document;
  return json::value(std::move(out));
}

json::value Gateway::list() const {
  const auto snap = catalog_.snapshot();
  json::array services;
  for (const auto& def : snap->definitions) {
    json::object s;
    s["name"] = def->service_name;
    s["description"] = def->service_description;
    s["domain"] = def->domain;
    s["version"] = def->version;
    s["checksum"] = def->checksum;
    json::array caps;
    for (const auto& cap : def->capabilities) caps.push_back(json::string(cap.name));
    s["capabilities"] = std::move(caps);
    services.push_back(std::move(s));
  }
  json::array failures;
  for (const auto& failure : snap->failures) {
    json::array problems;
    for (const auto& p : failure.problems) problems.push_back(json::string(p.to_string()));
    failures.push_back(json::object{{"file", failure.file.string()}, {"problems", problems}});
  }
  return json::object{{"services", std::move(services)},
                      {"failures", std::move(failures)},
                      {"generation", snap->generation}};
}

asio::awaitable<Result<json::value>> Gateway::execute(ExecuteParams params) {
  const auto started = steady_clock::now();
  const auto snap = catalog_.snapshot();
  auto def = snap->find(params.service);
  if (!def) {
    co_return Error::make(ErrorCode::kInvalidParams,
                          "registry: no service '" + params.service + "'");
  }
  auto found = find_capability(*def, params.capability);
  if (!found.ok()) co_return std::move(found).error();
  const Capability* cap = found.value();
  AuditEntry entry{def->service_name, cap->name, "registry/execute", "ok", {}};
  entry.detail["domain"] = def->domain;
  if (!params.caller.empty()) entry.detail["caller"] = params.caller;
  const auto finish = [&](const std::string& outcome) {
    entry.outcome = outcome;
    entry.detail["durationMs"] =
        std::chrono::duration<double, std::milli>(steady_clock::now() - started).count();
    if (audit_) audit_(entry);
  };

  const Declared declared = declared_variables(*def, *cap);
  auto variables = typed_variables(params.variables, declared, *def, *cap);
  if (!variables.ok()) {
    finish("refused");
    co_return std::move(variables).error();
  }
  ExecuteParams typed = params;
  typed.variables = std::move(variables).value();
  Call call(*this, def, typed);
  if (typed.store) {
    auto stored = co_await call.store_given(declared);
    if (!stored.ok()) {
      finish("error");
      co_return std::move(stored).error();
    }
  }
  auto tmpl = parse_template(cap->request);
  if (!tmpl.ok()) {
    finish("error");
    co_return std::move(tmpl).error();
  }
  const auto fail = [&](const Error& error) {
    finish("error");
    return Error::make(error.code, call.scrub.apply(error.message), error.data);
  };
  auto auth_vars = co_await call.resolve_variables(*cap, tmpl.value(), declared);
  if (!auth_vars.ok()) co_return fail(auth_vars.error());
  auto outcome = co_await call.prepare_authentication(auth_vars.value(), typed.dry_run);
  if (!outcome.ok()) co_return fail(outcome.error());
  if (outcome.value()) {
    finish(std::string(outcome.value()->as_object().at("status").as_string()));
    co_return call.scrub.apply_json(*outcome.value());
  }
  if (!call.missing.empty()) {
    finish("needs_input");
    co_return call.needs_input(cap->name);
  }

  auto filled = fill(tmpl.value(), call.lookup());
  if (!filled.ok()) {
    finish("refused");
    co_return Error::make(filled.error().code, call.scrub.apply(filled.error().message),
                          filled.error().data);
  }
  if (typed.dry_run) {
    finish("ok");
    co_return call.dry_run_answer(*cap, filled.value(), auth_vars.value());
  }
  auto response = co_await call.send_renewing_auth(tmpl.value(), filled.value(), auth_vars.value());
  if (!response.ok()) {
    const auto& error = response.error();
    if (error.data.is_object() && error.data.as_object().contains("rateLimited")) {
      json::object out;
      out["status"] = "rate_limited";
      out["service"] = def->service_name;
      out["capability"] = cap->name;
      out["retryAfter"] = error.data.as_object().at("retryAfter");
      finish("rate_limited");
      co_return json::value(std::move(out));
    }
    entry.detail["message"] = call.scrub.apply(error.message);
    finish("error");
    co_return Error::make(error.code, call.scrub.apply(error.message), error.data);
  }
  auto out = co_await call.answer(*cap, response.value());
  if (!out.ok()) {
    finish("error");
    co_return Error::make(out.error().code, call.scrub.apply(out.error().message));
  }
  entry.detail["httpStatus"] = response->status;
  finish(response->status >= 200 && response->status <= 299 ? "ok" : "failed");
  co_return call.scrub.apply_json(json::value(std::move(out).value()));
}

}  // namespace hearth::a2s
