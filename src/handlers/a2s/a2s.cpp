#include "handlers/a2s/a2s.hpp"

#include <boost/asio/awaitable.hpp>
#include <set>

#include "a2s/exec/gateway.hpp"
#include "handlers/config.hpp"
#include "handlers/create.hpp"

namespace hearth::handlers::a2s {
namespace asio = boost::asio;

namespace {

struct Config : manifest::HandlerConfig {
  std::string service;
  std::string capability;
  /// name -> literal value, or the input field it is taken from
  struct Source {
    json::value literal;
    std::string input;  ///< non-empty: a dotted path into the input
  };
  std::vector<std::pair<std::string, Source>> variables;
  bool full_result = false;
};

const json::value* at_path(const json::value& input, std::string_view path) {
  const json::value* at = &input;
  while (!path.empty()) {
    const auto dot = path.find('.');
    const auto key = path.substr(0, dot);
    if (!at->is_object()) return nullptr;
    at = at->as_object().if_contains(key);
    if (at == nullptr) return nullptr;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return at;
}

/// "localhost:8741" -> {"localhost", 8741}; no port: 443.
std::pair<std::string, std::uint16_t> split_domain(std::string_view domain) {
  const auto colon = domain.rfind(':');
  if (colon == std::string_view::npos || domain.find(']', colon) != std::string_view::npos) {
    return {std::string(domain), 443};
  }
  return {std::string(domain.substr(0, colon)),
          static_cast<std::uint16_t>(std::atoi(std::string(domain.substr(colon + 1)).c_str()))};
}

class A2sHandler final : public Handler {
 public:
  A2sHandler(std::shared_ptr<const Config> config, std::shared_ptr<hearth::a2s::Gateway> gateway,
             egress::NetworkPolicy policy)
      : config_(std::move(config)), gateway_(std::move(gateway)), policy_(std::move(policy)) {}

  asio::awaitable<Result<json::value>> call(Call call) override {
    hearth::a2s::ExecuteParams params;
    params.service = config_->service;
    params.capability = config_->capability;
    params.caller = call.service != nullptr ? call.service->name + "/" + call.endpoint->id : "";
    // The domain is checked against networkAccess on every call: a reload may have changed it.
    const auto snap = gateway_->snapshot();
    const auto def = snap->find(config_->service);
    if (!def) {
      co_return Error::make(ErrorCode::kHandlerError,
                            "a2s: no service '" + config_->service + "' in the registry");
    }
    const auto [host, port] = split_domain(def->domain);
    if (auto refused = policy_.check(host, port, {})) {
      co_return Error::make(
          ErrorCode::kPermissionDenied,
          "a2s: networkAccess does not allow " + def->domain + " (" + def->service_name + ")",
          refused->data);
    }
    std::set<std::string> named;
    for (const auto& [name, source] : config_->variables) {
      named.insert(name);
      if (source.input.empty()) {
        params.variables[name] = source.literal;
      } else if (const auto* v = at_path(call.input, source.input); v != nullptr && !v->is_null()) {
        params.variables[name] = *v;
      }
    }
    if (call.input.is_object()) {
      for (const auto& [key, value] : call.input.as_object()) {
        if (named.count(std::string(key)) != 0 || value.is_null()) continue;
        if (declares(*def, key)) params.variables[key] = value;
      }
    }
    auto result = co_await gateway_->execute(std::move(params));
    if (!result.ok()) co_return std::move(result).error();
    const auto& obj = result->as_object();
    const auto status = obj.at("status").as_string();
    if (status != "ok") {
      std::string message = "a2s: " + config_->service + " / " + config_->capability + ": ";
      if (status == "needs_input") {
        message += "variables are missing";
      } else if (status == "rate_limited") {
        message += "rate limited";
      } else {
        message += "the service answered HTTP " + (obj.contains("httpStatus")
                                                       ? json::dump(obj.at("httpStatus"))
                                                       : std::string("with an error"));
      }
      co_return Error::make(ErrorCode::kHandlerError, std::move(message), result.value());
    }
    if (config_->full_result) co_return std::move(result).value();
    co_return obj.contains("body") ? obj.at("body") : json::value(nullptr);
  }

  Result<std::shared_ptr<Stream>> open_stream(Call, StreamSink) override {
    return Error::make(ErrorCode::kInternalError, "a2s handlers cannot serve subscriptions");
  }

 private:
  bool declares(const hearth::a2s::Definition& def, std::string_view name) const {
    for (const auto& cap : def.capabilities) {
      if (cap.name != config_->capability) continue;
      for (const auto* vars : {&cap.input, &cap.temp}) {
        for (const auto& v : *vars) {
          if (v.name == name) return true;
        }
      }
    }
    return false;
  }

  std::shared_ptr<const Config> config_;
  std::shared_ptr<hearth::a2s::Gateway> gateway_;
  egress::NetworkPolicy policy_;
};

class A2sKind final : public Kind {
 public:
  explicit A2sKind(KindOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "a2s"; }
  std::vector<std::string_view> keys() const override {
    return {"service", "capability", "variables", "output"};
  }

  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override {
    ConfigReader in(handler, path, problems);
    auto config = std::make_shared<Config>();
    const auto text = [&](std::string_view key, std::string& out) {
      const auto* v = in.get(key);
      if (v == nullptr || !v->is_string() || v->as_string().empty()) {
        in.add(key, "required: a non-empty string");
        return;
      }
      out = std::string(v->as_string());
    };
    text("service", config->service);
    text("capability", config->capability);
    if (const auto* v = in.get("variables")) {
      if (!v->is_object()) {
        in.add("variables", "must be an object of NAME: value");
      } else {
        for (const auto& [name, value] : v->as_object()) {
          Config::Source source;
          if (value.is_object() && value.as_object().contains("input")) {
            const auto& field = value.as_object().at("input");
            if (!field.is_string() || field.as_string().empty() || value.as_object().size() != 1) {
              in.add("variables." + std::string(name),
                     "{\"input\": FIELD} must name one input field (a dotted path)");
              continue;
            }
            source.input = std::string(field.as_string());
          } else {
            source.literal = value;
          }
          config->variables.emplace_back(std::string(name), std::move(source));
        }
      }
    }
    if (const auto* v = in.get("output")) {
      if (!v->is_string() || (v->as_string() != "body" && v->as_string() != "result")) {
        in.add("output", "must be \"body\" or \"result\"");
      } else {
        config->full_result = v->as_string() == "result";
      }
    }
    return in.result(std::move(config));
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest&,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_ASSIGN_OR_RETURN(auto config, config_of<Config>(*this, endpoint));
    if (endpoint.method == manifest::Method::kSubscription) {
      return Error::make(ErrorCode::kInternalError, "a2s handlers cannot serve subscriptions");
    }
    if (!options_.a2s) {
      return Error::make(ErrorCode::kInternalError,
                         "a2s handlers need the daemon's registry (hearth serve --registry DIR)");
    }
    auto policy = endpoint.effective.network_access.value_or(egress::NetworkPolicy());
    return std::unique_ptr<Handler>(
        std::make_unique<A2sHandler>(std::move(config), options_.a2s, std::move(policy)));
  }

 private:
  KindOptions options_;
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<A2sKind>(options);
}

}  // namespace hearth::handlers::a2s
