#include "agentapp/bridge/bridge.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/records/records.hpp"
#include "common/ascii.hpp"
#include "schema/schema.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

/// What a method needs the app to have declared: a permission of `scope` whose access covers
/// `access` ("read" or "write"); no scope: nothing.
struct MethodRule {
  std::string_view scope;
  std::string_view access;
};

const std::map<std::string, std::map<std::string, MethodRule>, std::less<>>& rules() {
  static const std::map<std::string, std::map<std::string, MethodRule>, std::less<>> kRules = {
      {"lime.storage",
       {{"get", {"storage", "read"}},
        {"put", {"storage", "write"}},
        {"query", {"storage", "read"}}}},
      {"lime.artifacts",
       {{"create", {"artifact", "write"}},
        {"read", {"artifact", "read"}},
        {"list", {"artifact", "read"}}}},
      {"lime.evidence", {{"record", {"", ""}}, {"export", {"", ""}}}},
      // Agent tasks run through the App Server (agentSession/*), which checks this capability.
      {"lime.agent", {{"startTask", {"", ""}}}},
  };
  return kRules;
}

Error denial(std::string_view stage, const Invocation& call, std::string reason) {
  json::object data{{"stage", stage},
                    {"capability", call.capability},
                    {"method", call.method},
                    {"reason", reason}};
  return Error::make(
      ErrorCode::kPermissionDenied,
      call.capability + "." + call.method + " denied (" + std::string(stage) + "): " + reason,
      std::move(data));
}

/// `write` does not include reading (the format has `read-write` for both).
bool covers(std::string_view declared, std::string_view needed) {
  return declared == "admin" || declared == "read-write" || declared == needed;
}

/// The app's declared permission that covers the rule, or why none does.
std::optional<std::string> permission_problem(const json::object& fm, const MethodRule& rule) {
  if (rule.scope.empty()) return std::nullopt;
  const auto* list = fm.if_contains("permissions");
  if (list != nullptr && list->is_array()) {
    for (const auto& p : list->get_array()) {
      if (!p.is_object()) continue;
      const auto* scope = p.get_object().if_contains("scope");
      const auto* access = p.get_object().if_contains("access");
      if (scope == nullptr || !scope->is_string() || scope->get_string() != rule.scope) continue;
      // A permission without access grants reading.
      const std::string_view declared = access != nullptr && access->is_string()
                                            ? std::string_view(access->get_string())
                                            : "read";
      if (covers(declared, rule.access)) return std::nullopt;
    }
  }
  return "the app declares no permission with scope '" + std::string(rule.scope) + "' allowing " +
         std::string(rule.access);
}

bool is_select(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size() && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r')) {
    ++i;
  }
  return ascii::iequals(sql.substr(i, 6), "select");
}

const json::value* param(const Invocation& call, std::string_view key) {
  return call.params.is_object() ? call.params.get_object().if_contains(key) : nullptr;
}

Result<std::string> string_param(const Invocation& call, std::string_view key) {
  const auto* v = param(call, key);
  if (v == nullptr || !v->is_string() || v->get_string().empty()) {
    return Error::make(ErrorCode::kInvalidParams, call.capability + "." + call.method +
                                                      ": params." + std::string(key) +
                                                      " must be a non-empty string");
  }
  return std::string(v->get_string());
}

/// The compiled schema of the app's artifact type, nullptr when it names none.
Result<std::shared_ptr<const schema::Schema>> artifact_schema(const fs::path& package,
                                                              const json::object& fm,
                                                              std::string_view type,
                                                              const Invocation& call) {
  const auto* list = fm.if_contains("artifactTypes");
  const json::object* declared = nullptr;
  if (list != nullptr && list->is_array()) {
    for (const auto& t : list->get_array()) {
      const auto* key = t.is_object() ? t.get_object().if_contains("key") : nullptr;
      if (key != nullptr && key->is_string() && key->get_string() == type) {
        declared = &t.get_object();
      }
    }
  }
  if (declared == nullptr) {
    return denial("policy", call, "the app declares no artifact type '" + std::string(type) + "'");
  }
  const auto* path = declared->if_contains("schema");
  if (path == nullptr || !path->is_string()) return std::shared_ptr<const schema::Schema>();
  const fs::path rel = fs::path(std::string(path->get_string())).lexically_normal();
  if (rel.is_absolute() || rel.empty() || *rel.begin() == "..") {
    return Error::make(ErrorCode::kInvalidParams,
                       "artifact type " + std::string(type) + ": its schema is not in the package");
  }
  std::ifstream in(package / rel, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = json::parse_text(text.str());
  if (!in || !parsed.ok() || !parsed.value().is_object()) {
    return Error::make(ErrorCode::kInvalidParams, "artifact type " + std::string(type) +
                                                      ": its schema " + rel.string() +
                                                      " is not a JSON object");
  }
  // hearth's engine is draft-07: the declared dialect is set aside (docs/agent-apps.md).
  parsed.value().as_object().erase("$schema");
  Problems problems;
  auto compiled = schema::make_draft7_compiler()->compile(parsed.value(), {}, problems);
  if (!compiled) {
    return Error::make(ErrorCode::kInvalidParams,
                       "artifact type " + std::string(type) + ": its schema cannot be used");
  }
  return compiled;
}

}  // namespace

const json::object& provided_capabilities() {
  static const json::object kProvided = [] {
    json::object out;
    for (const auto& [capability, methods] : rules()) {
      json::array names;
      for (const auto& [name, rule] : methods) names.emplace_back(name);
      out[capability] = std::move(names);
    }
    return out;
  }();
  return kProvided;
}

Result<std::reference_wrapper<const AppManifest>> Bridge::manifest_of(const InstalledApp& app) {
  // An installed package's folder is named by its version and package hash, and is read-only:
  // the same folder is the same manifest.
  auto it = manifests_.find(app.name);
  if (it == manifests_.end() || it->second.first != app.dir) {
    HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(app.dir));
    it = manifests_.insert_or_assign(app.name, std::make_pair(app.dir, std::move(manifest))).first;
  }
  return std::cref(it->second.second);
}

Result<std::shared_ptr<AppData>> Bridge::data_of(std::string_view app) {
  const fs::path file = store_.data_dir(app) / "app.db";
  auto it = data_.find(app);
  if (it != data_.end()) {
    // Still the file at that path, and not deleted: the kept connection is that file's.
    struct stat kept {};
    struct stat now {};
    if (::fstat(it->second.file.get(), &kept) == 0 && kept.st_nlink > 0 &&
        ::stat(file.c_str(), &now) == 0 && now.st_dev == kept.st_dev && now.st_ino == kept.st_ino) {
      return it->second.data;
    }
    data_.erase(it);
  }
  HEARTH_ASSIGN_OR_RETURN(auto opened, AppData::open(file.parent_path()));
  std::shared_ptr<AppData> data(std::move(opened));
  Fd held(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (held) data_.insert_or_assign(std::string(app), OpenData{std::move(held), data});
  return data;
}

ReadinessContext host_readiness(
    std::function<bool(std::string_view app, std::string_view key)> secret_present) {
  ReadinessContext context;
  for (const auto& member : provided_capabilities()) context.provided.emplace_back(member.key());
  context.secret_present = std::move(secret_present);
  context.runs_backends = true;
  // Each capability's method set is version 1.0.0; the runtime model as of format 0.10.0; the
  // bridge protocol (capability/invoke) 1.0.0.
  for (const auto& member : provided_capabilities()) {
    context.versions[std::string(member.key())] = "1.0.0";
  }
  context.versions["appRuntime"] = "0.10.0";
  context.versions["sdk"] = "1.0.0";
  return context;
}

Result<json::value> Bridge::invoke(const Invocation& call) {
  std::lock_guard lock(mutex_);
  auto app = store_.find(call.app);
  if (!app.ok()) return denial("enabled", call, "no app named '" + call.app + "' is installed");
  if (!app.value().enabled) return denial("enabled", call, "the app is not enabled");
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(app.value()));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(call.app));
  const Provenance provenance{app.value().name, app.value().version, app.value().package_hash,
                              app.value().manifest_hash};
  EvidenceLog evidence(data->database(), provenance);

  // Every refusal from here on is recorded, in the app's evidence and in its log.
  const auto refuse = [&](std::string_view stage, std::string reason) -> Error {
    Error e = denial(stage, call, std::move(reason));
    json::object detail = e.data.as_object();
    detail["workspace"] = call.workspace;
    detail["caller"] = call.caller;
    (void)evidence.append("capability.denied", detail);
    (void)store_.record(call.app, "capability.denied", detail);
    return e;
  };
  const auto declared = declared_capabilities(manifest.front_matter);
  if (std::find(declared.begin(), declared.end(), call.capability) == declared.end()) {
    return refuse("declared", "the app does not declare " + call.capability);
  }
  const auto capability = rules().find(call.capability);
  if (capability == rules().end()) {
    return refuse("ready", "hearth does not provide " + call.capability + " yet");
  }
  const auto method = capability->second.find(call.method);
  if (method == capability->second.end()) {
    std::string known;
    for (const auto& [name, rule] : capability->second) known += (known.empty() ? "" : ", ") + name;
    return refuse("ready",
                  call.capability + " has no method '" + call.method + "' (" + known + ")");
  }
  HEARTH_ASSIGN_OR_RETURN(auto decision,
                          store_.decision(call.app, call.capability, call.workspace));
  if (decision == "deny") return refuse("granted", "a grant rule denies it");
  if (decision != "allow") return refuse("granted", "it has not been granted");
  MethodRule rule = method->second;
  if (call.capability == "lime.storage" && call.method == "query") {
    auto sql = string_param(call, "sql");
    if (sql.ok() && !is_select(sql.value())) rule.access = "write";
  }
  if (auto problem = permission_problem(manifest.front_matter, rule)) {
    return refuse("policy", *problem);
  }

  if (call.capability == "lime.agent") {
    return Error::make(ErrorCode::kMethodNotFound,
                       "lime.agent runs through the App Server: agentSession/start, then "
                       "agentSession/turn/start (docs/app-server.md)");
  }

  // Run it.
  Result<json::value> out = json::value(nullptr);
  json::object summary{{"capability", call.capability},
                       {"method", call.method},
                       {"workspace", call.workspace},
                       {"caller", call.caller}};
  ArtifactStore artifacts(data->database(), store_.data_dir(call.app) / "artifacts", provenance,
                          evidence);
  if (call.capability == "lime.storage") {
    if (call.method == "get" || call.method == "put") {
      HEARTH_ASSIGN_OR_RETURN(auto key, string_param(call, "key"));
      summary["key"] = key;
      if (call.method == "get") {
        HEARTH_ASSIGN_OR_RETURN(auto value, data->get(key));
        out = json::value(json::object{{"key", key}, {"value", std::move(value)}});
      } else {
        const auto* value = param(call, "value");
        if (value == nullptr) {
          return Error::make(ErrorCode::kInvalidParams,
                             "lime.storage.put: params.value is required");
        }
        HEARTH_RETURN_IF_ERROR(data->put(key, *value));
        out = json::value(json::object{{"key", key}, {"stored", true}});
      }
    } else {
      HEARTH_ASSIGN_OR_RETURN(auto sql, string_param(call, "sql"));
      const auto* params = param(call, "params");
      static const json::array kNone;
      const json::array& bound =
          params != nullptr && params->is_array() ? params->get_array() : kNone;
      summary["sql"] = sql;
      HEARTH_ASSIGN_OR_RETURN(auto rows, data->query(sql, bound));
      summary["rows"] = static_cast<std::int64_t>(rows.size());
      out = json::value(json::object{{"rows", std::move(rows)}});
    }
  } else if (call.capability == "lime.artifacts") {
    if (call.method == "create") {
      HEARTH_ASSIGN_OR_RETURN(auto type, string_param(call, "type"));
      const auto* content = param(call, "content");
      if (content == nullptr) {
        return Error::make(ErrorCode::kInvalidParams,
                           "lime.artifacts.create: params.content is required");
      }
      auto schema = artifact_schema(app.value().dir, manifest.front_matter, type, call);
      if (!schema.ok()) {
        if (schema.error().code == ErrorCode::kPermissionDenied) {
          return refuse("policy", schema.error().data.at("reason").as_string().c_str());
        }
        return std::move(schema).error();
      }
      const bool text = content->is_string();
      const std::string bytes =
          text ? std::string(content->get_string()) : json::serialize(*content);
      const auto* media = param(call, "mediaType");
      const std::string media_type = media != nullptr && media->is_string()
                                         ? std::string(media->get_string())
                                         : (text ? "text/plain" : "application/json");
      const auto* metadata = param(call, "metadata");
      static const json::object kNoMetadata;
      HEARTH_ASSIGN_OR_RETURN(
          auto record,
          artifacts.create(
              type, media_type, bytes,
              metadata != nullptr && metadata->is_object() ? metadata->get_object() : kNoMetadata,
              schema.value().get()));
      summary["artifact"] = record["id"];
      out = json::value(std::move(record));
    } else if (call.method == "read") {
      HEARTH_ASSIGN_OR_RETURN(auto id, string_param(call, "id"));
      HEARTH_ASSIGN_OR_RETURN(auto record, artifacts.read(id));
      summary["artifact"] = id;
      out = json::value(std::move(record));
    } else {
      HEARTH_ASSIGN_OR_RETURN(auto list, artifacts.list());
      out = json::value(json::object{{"artifacts", std::move(list)}});
    }
  } else if (call.capability == "lime.evidence") {
    if (call.method == "record") {
      HEARTH_ASSIGN_OR_RETURN(auto kind, string_param(call, "kind"));
      const auto* detail = param(call, "detail");
      static const json::object kNoDetail;
      // An app's own entries are marked as such: "app." before its kind.
      HEARTH_ASSIGN_OR_RETURN(
          auto entry, evidence.append("app." + kind, detail != nullptr && detail->is_object()
                                                         ? detail->get_object()
                                                         : kNoDetail));
      return json::value(std::move(entry));
    }
    const auto* after = param(call, "after");
    HEARTH_ASSIGN_OR_RETURN(
        auto entries,
        evidence.entries(after != nullptr && after->is_int64() ? after->get_int64() : 0));
    const auto verified = evidence.verify();
    json::object exported{{"entries", std::move(entries)}, {"verified", verified.ok()}};
    if (!verified.ok()) exported["problem"] = verified.error().message;
    return json::value(std::move(exported));
  }
  if (!out.ok()) return out;
  HEARTH_ASSIGN_OR_RETURN(auto logged, evidence.append("capability.invoked", summary));
  (void)logged;
  return out;
}

Status Bridge::record(std::string_view app_name, std::string_view kind,
                      const json::object& detail) {
  std::lock_guard lock(mutex_);
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(app.name));
  EvidenceLog evidence(data->database(),
                       Provenance{app.name, app.version, app.package_hash, app.manifest_hash});
  HEARTH_ASSIGN_OR_RETURN(auto entry, evidence.append(kind, detail));
  (void)entry;
  return {};
}

Result<json::value> Bridge::evidence(std::string_view app_name, std::int64_t after) {
  std::lock_guard lock(mutex_);
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(app.name));
  EvidenceLog log(data->database(),
                  Provenance{app.name, app.version, app.package_hash, app.manifest_hash});
  HEARTH_ASSIGN_OR_RETURN(auto entries, log.entries(after));
  const auto verified = log.verify();
  json::object out{
      {"appId", app.name}, {"entries", std::move(entries)}, {"verified", verified.ok()}};
  if (!verified.ok()) out["problem"] = verified.error().message;
  return json::value(std::move(out));
}

Result<json::array> Bridge::list(std::string_view app_name, std::string_view workspace) {
  std::lock_guard lock(mutex_);
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(app));
  json::array out;
  for (const auto& capability : declared_capabilities(manifest.front_matter)) {
    json::object entry{{"capability", capability}};
    const auto provided = rules().find(capability);
    HEARTH_ASSIGN_OR_RETURN(auto decision, store_.decision(app_name, capability, workspace));
    const auto block = [&entry](std::string_view stage, const std::string& reason) {
      entry["status"] = "blocked";
      entry["stage"] = stage;
      entry["reason"] = reason;
    };
    if (!app.enabled) {
      block("enabled", "the app is not enabled");
    } else if (provided == rules().end()) {
      block("ready", "hearth does not provide " + capability + " yet");
    } else if (decision == "deny") {
      block("granted", "a grant rule denies it");
    } else if (decision != "allow") {
      block("granted", "it has not been granted");
    } else {
      entry["status"] = "available";
    }
    if (provided != rules().end()) entry["methods"] = provided_capabilities().at(capability);
    out.emplace_back(std::move(entry));
  }
  return out;
}

}  // namespace hearth::agentapp
