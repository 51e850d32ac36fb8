#include "agent/servers.hpp"

#include "httpclient/url.hpp"

namespace hearth::agent {

namespace {

Error invalid(const std::string& message, std::string_view field) {
  return Error::make(ErrorCode::kInvalidParams, message,
                     json::object{{"field", field}, {"reason", "model-server"}});
}

bool is_key_ref(std::string_view ref) {
  const auto cut = ref.find("::");
  return cut != std::string_view::npos && cut > 0 && cut + 2 < ref.size();
}

/// The URL as compared: scheme, host and port as parse_url reads them, then the path without
/// trailing slashes.
std::optional<std::string> comparable(std::string_view base_url) {
  auto url = httpclient::parse_url(normalize_base_url(base_url));
  if (!url.ok()) return std::nullopt;
  std::string target = url->target;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  if (target == "/") target.clear();
  return url->origin() + target;
}

}  // namespace

std::string normalize_base_url(std::string_view base_url) {
  std::string out(base_url);
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out;
}

Result<std::string> key_domain_of(std::string_view base_url) {
  HEARTH_ASSIGN_OR_RETURN(auto url, httpclient::parse_url(base_url));
  return url.host_header();
}

Status ModelServers::add(ModelServer server) {
  if (server.name.empty()) return invalid("a model server needs a name", "name");
  if (find(server.name) != nullptr) {
    return invalid("the model server '" + server.name + "' is configured twice", "name");
  }
  server.base_url = normalize_base_url(server.base_url);
  if (auto url = httpclient::parse_url(server.base_url); !url.ok()) {
    return invalid(
        "the model server '" + server.name + "' has no usable URL: " + url.error().message,
        "baseUrl");
  }
  if (!server.key_ref.empty() && !is_key_ref(server.key_ref)) {
    return invalid("a model key is a vault variable SCOPE::NAME, not '" + server.key_ref + "'",
                   "apiKeyRef");
  }
  servers_.push_back(std::move(server));
  return {};
}

Status ModelServers::set_key(const std::string& name, const std::string& key_ref) {
  for (auto& s : servers_) {
    if (s.name != name) continue;
    if (!is_key_ref(key_ref)) {
      return invalid("a model key is a vault variable SCOPE::NAME, not '" + key_ref + "'",
                     "apiKeyRef");
    }
    s.key_ref = key_ref;
    return {};
  }
  return invalid("no model server is named '" + name + "'", "server");
}

const ModelServer* ModelServers::find(std::string_view name) const {
  for (const auto& s : servers_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ModelServer* ModelServers::find_url(std::string_view base_url) const {
  const auto wanted = comparable(base_url);
  if (!wanted) return nullptr;
  for (const auto& s : servers_) {
    if (comparable(s.base_url) == wanted) return &s;
  }
  return nullptr;
}

Result<ResolvedModel> ModelServers::resolve(const ModelChoice& choice,
                                            const ModelConfig& base) const {
  ResolvedModel out;
  out.config = base;
  out.config.api_key.clear();
  const ModelServer* server = nullptr;
  if (choice.server) {
    server = find(*choice.server);
    if (server == nullptr) {
      std::string names;
      for (const auto& s : servers_) names += (names.empty() ? "" : ", ") + s.name;
      return invalid("no model server is named '" + *choice.server + "'" +
                         (names.empty() ? std::string(": none is configured")
                                        : " (configured: " + names + ")"),
                     "model.server");
    }
    if (choice.base_url && find_url(*choice.base_url) != server) {
      return invalid("model.baseUrl is not the URL of the model server '" + server->name +
                         "': give one or the other",
                     "model.baseUrl");
    }
  } else if (choice.base_url) {
    server = find_url(*choice.base_url);
  } else if (!servers_.empty()) {
    server = &servers_.front();
  }

  if (server != nullptr) {
    out.server = server->name;
    out.config.base_url = server->base_url;
    out.config.model = server->model;
    out.config.stream = server->stream;
    out.config.tools = server->tools;
    out.key_ref = server->key_ref;
  } else if (choice.base_url) {
    // A server the run names: no configured key, https, public addresses only.
    auto url = httpclient::parse_url(*choice.base_url);
    if (!url.ok()) {
      return invalid("model.baseUrl is not a usable URL: " + url.error().message, "model.baseUrl");
    }
    if (!url->tls) {
      return invalid(
          "model.baseUrl " + *choice.base_url +
              " is not a configured model server, and one a run names must be https (a server "
              "on this machine or a private network is configured on the daemon: "
              "--model-url, --model-server)",
          "model.baseUrl");
    }
    out.config.base_url = normalize_base_url(*choice.base_url);
    out.config.model.clear();
    out.config.public_only = true;
  } else {
    return invalid(
        "no model server is configured: start the daemon with --model-url and --model (or "
        "--model-server), or pass model {baseUrl, model}",
        "model");
  }

  if (choice.model) out.config.model = *choice.model;
  if (choice.stream) out.config.stream = *choice.stream;
  if (choice.tools) out.config.tools = *choice.tools;
  if (out.config.model.empty()) {
    return invalid("no model is named: pass model.model (the model server '" +
                       (out.server.empty() ? out.config.base_url : out.server) +
                       "' has no default model)",
                   "model.model");
  }
  if (choice.key_ref && choice.key_ref->empty()) {
    out.key_ref.clear();  // "no key", even for a server that has one
  } else if (choice.key_ref) {
    if (!is_key_ref(*choice.key_ref)) {
      return invalid(
          "model.apiKeyRef is a vault variable SCOPE::NAME, not '" + *choice.key_ref + "'",
          "model.apiKeyRef");
    }
    if (server == nullptr || *choice.key_ref != server->key_ref) {
      // A key the run names: the vault decides where it may go.
      HEARTH_ASSIGN_OR_RETURN(out.key_domain, key_domain_of(out.config.base_url));
    }
    out.key_ref = *choice.key_ref;
  }
  return out;
}

}  // namespace hearth::agent
