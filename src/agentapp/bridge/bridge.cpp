#include "agentapp/bridge/bridge.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/records/records.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

/// How many apps' locks this thread holds (a call in progress): the store may tell of a change
/// from inside one (a capability that changes an app), when trying the lock again would be
/// undefined.
thread_local int t_locks_held = 0;
struct HeldHere {
  HeldHere() { ++t_locks_held; }
  ~HeldHere() { --t_locks_held; }
  HeldHere(const HeldHere&) = delete;
  HeldHere& operator=(const HeldHere&) = delete;
};

const std::shared_ptr<const CapabilityRegistry>& builtin_registry() {
  static const std::shared_ptr<const CapabilityRegistry> kBuiltin = make_builtin_capabilities();
  return kBuiltin;
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

/// The app's declared permission that covers `needed`, or why none does.
std::optional<std::string> permission_problem(const json::object& fm, const Permission& needed) {
  if (needed.scope.empty()) return std::nullopt;
  const auto* list = fm.if_contains("permissions");
  if (list != nullptr && list->is_array()) {
    for (const auto& p : list->get_array()) {
      if (!p.is_object()) continue;
      const auto* scope = p.get_object().if_contains("scope");
      const auto* access = p.get_object().if_contains("access");
      if (scope == nullptr || !scope->is_string() || scope->get_string() != needed.scope) continue;
      // A permission without access grants reading.
      const std::string_view declared = access != nullptr && access->is_string()
                                            ? std::string_view(access->get_string())
                                            : "read";
      if (covers(declared, needed.access)) return std::nullopt;
    }
  }
  return "the app declares no permission with scope '" + std::string(needed.scope) + "' allowing " +
         std::string(needed.access);
}

Provenance provenance_of(const InstalledApp& app) {
  return Provenance{app.name, app.version, app.package_hash, app.manifest_hash};
}

/// enabled: the app is installed and enabled. Nothing is recorded yet: there may be no app to
/// record it for.
Result<InstalledApp> check_enabled(const Invocation& call, AppStore& store) {
  auto app = store.find(call.app);
  if (!app.ok()) return denial("enabled", call, "no app named '" + call.app + "' is installed");
  if (!app.value().enabled) return denial("enabled", call, "the app is not enabled");
  return std::move(app).value();
}

/// declared: the app's manifest names the capability.
Status check_declared(const Invocation& call, const AppManifest& manifest, const Refuse& refuse) {
  const auto declared = declared_capabilities(manifest.front_matter);
  if (std::find(declared.begin(), declared.end(), call.capability) == declared.end()) {
    return refuse("declared", "the app does not declare " + call.capability);
  }
  return {};
}

/// ready: hearth provides the capability, and it has the method.
Result<const Capability*> check_ready(const Invocation& call, const CapabilityRegistry& registry,
                                      const Refuse& refuse) {
  const Capability* capability = registry.find(call.capability);
  if (capability == nullptr) {
    return refuse("ready", "hearth does not provide " + call.capability + " yet");
  }
  if (capability->method(call.method) == nullptr) {
    std::string known;
    for (const auto& name : registry.provided().at(call.capability).as_array()) {
      known += (known.empty() ? "" : ", ") + std::string(name.as_string());
    }
    return refuse("ready",
                  call.capability + " has no method '" + call.method + "' (" + known + ")");
  }
  return capability;
}

/// granted: a grant allows the capability for the workspace, and no deny rule forbids it.
Status check_granted(const Invocation& call, AppStore& store, const Refuse& refuse) {
  HEARTH_ASSIGN_OR_RETURN(auto decision, store.decision(call.app, call.capability, call.workspace));
  if (decision == "deny") return refuse("granted", "a grant rule denies it");
  if (decision != "allow") return refuse("granted", "it has not been granted");
  return {};
}

/// policy: the app's declared permissions cover what this call of the method needs.
Status check_policy(const Invocation& call, const Capability& capability,
                    const AppManifest& manifest, const Refuse& refuse) {
  const Permission needed = capability.needs(*capability.method(call.method), call);
  if (auto problem = permission_problem(manifest.front_matter, needed)) {
    return refuse("policy", *problem);
  }
  return {};
}

}  // namespace

const json::object& provided_capabilities() {
  return builtin_registry()->provided();
}

ReadinessContext host_readiness(
    std::function<bool(std::string_view app, std::string_view key)> secret_present) {
  return host_readiness(*builtin_registry(), std::move(secret_present));
}

ReadinessContext host_readiness(
    const CapabilityRegistry& capabilities,
    std::function<bool(std::string_view app, std::string_view key)> secret_present) {
  ReadinessContext context;
  for (const auto& member : capabilities.provided()) context.provided.emplace_back(member.key());
  context.secret_present = std::move(secret_present);
  context.runs_backends = true;
  // Each capability's method set is version 1.0.0; the runtime model as of format 0.10.0; the
  // bridge protocol (capability/invoke) 1.0.0.
  for (const auto& member : capabilities.provided()) {
    context.versions[std::string(member.key())] = "1.0.0";
  }
  context.versions["appRuntime"] = "0.10.0";
  context.versions["sdk"] = "1.0.0";
  return context;
}

Bridge::Bridge(AppStore& store) : Bridge(store, builtin_registry()) {}

Bridge::Bridge(AppStore& store, std::shared_ptr<const CapabilityRegistry> capabilities)
    : store_(store), capabilities_(std::move(capabilities)) {
  listener_ = store_.on_changed([this](std::string_view app) { forget(app); });
}

Bridge::~Bridge() {
  store_.remove_on_changed(listener_);
}

void Bridge::forget(std::string_view app) {
  std::vector<std::shared_ptr<AppState>> states;
  {
    const std::lock_guard lock(apps_mutex_);
    if (app.empty()) {
      for (const auto& [name, state] : apps_) states.push_back(state);
    } else if (auto it = apps_.find(app); it != apps_.end()) {
      states.push_back(it->second);
    }
  }
  for (const auto& state : states) {
    state->stale = true;
    // No call holds it: let go of the database now (an uninstall is about to drop it).
    if (t_locks_held > 0) continue;
    if (std::unique_lock lock(state->mutex, std::try_to_lock); lock.owns_lock()) refresh(*state);
  }
}

void Bridge::refresh(AppState& state) {
  if (!state.stale.exchange(false)) return;
  state.manifest.reset();
  state.data.reset();
}

std::shared_ptr<Bridge::AppState> Bridge::state_of(std::string_view app) {
  const std::lock_guard lock(apps_mutex_);
  auto it = apps_.find(app);
  if (it == apps_.end()) it = apps_.emplace(std::string(app), std::make_shared<AppState>()).first;
  return it->second;
}

Result<std::reference_wrapper<const AppManifest>> Bridge::manifest_of(AppState& state,
                                                                      const InstalledApp& app) {
  // An installed package's folder is named by its version and package hash, and is read-only:
  // the same folder is the same manifest.
  if (!state.manifest || state.manifest->first != app.dir) {
    HEARTH_ASSIGN_OR_RETURN(auto manifest, read_manifest(app.dir));
    state.manifest.emplace(app.dir, std::move(manifest));
  }
  return std::cref(state.manifest->second);
}

Result<std::shared_ptr<AppData>> Bridge::data_of(AppState& state, const InstalledApp& app,
                                                 const AppManifest& manifest) {
  const auto placement = app_placement(app.name, manifest.front_matter, store_.data_dir(app.name));
  if (placement.placement == kServerPostgresql) {
    // No file to watch: kept for the installed package (a reinstall or an upgrade is another
    // one), and dropped when the store tells of a change.
    const std::string key = app.package_hash + " " + app.installed_at;
    if (state.data && state.data->key == key) return state.data->data;
    state.data.reset();
    HEARTH_ASSIGN_OR_RETURN(auto opened, store_.open_data(app));
    std::shared_ptr<AppData> data(std::move(opened));
    state.data.emplace(OpenData{Fd(), key, data});
    return data;
  }
  const fs::path file = placement.sqlite_file;
  if (state.data && state.data->file) {
    // Still the file at that path, and not deleted: the kept connection is that file's.
    struct stat kept {};
    struct stat now {};
    if (::fstat(state.data->file.get(), &kept) == 0 && kept.st_nlink > 0 &&
        ::stat(file.c_str(), &now) == 0 && now.st_dev == kept.st_dev && now.st_ino == kept.st_ino) {
      return state.data->data;
    }
  }
  state.data.reset();
  HEARTH_ASSIGN_OR_RETURN(auto opened, AppData::open(store_.engine(), placement));
  std::shared_ptr<AppData> data(std::move(opened));
  Fd held(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (held) state.data.emplace(OpenData{std::move(held), std::string(), data});
  return data;
}

Result<const Capability*> Bridge::admit(const Invocation& call, const AppManifest& manifest,
                                        const Refuse& refuse) {
  HEARTH_RETURN_IF_ERROR(check_declared(call, manifest, refuse));
  HEARTH_ASSIGN_OR_RETURN(const Capability* capability, check_ready(call, *capabilities_, refuse));
  HEARTH_RETURN_IF_ERROR(check_granted(call, store_, refuse));
  HEARTH_RETURN_IF_ERROR(check_policy(call, *capability, manifest, refuse));
  return capability;
}

Result<json::value> Bridge::run(const Capability& capability, CallContext& context) {
  auto out = capability.invoke(context);
  if (!out.ok() || !capability.recorded()) return out;
  HEARTH_ASSIGN_OR_RETURN(auto logged,
                          context.evidence.append("capability.invoked", context.summary));
  (void)logged;
  return out;
}

Result<json::value> Bridge::invoke(const Invocation& call) {
  HEARTH_ASSIGN_OR_RETURN(const InstalledApp app, check_enabled(call, store_));
  const auto state = state_of(call.app);
  const std::lock_guard lock(state->mutex);
  const HeldHere held;
  refresh(*state);
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(*state, app));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(*state, app, manifest));
  const Provenance provenance = provenance_of(app);
  EvidenceLog evidence(data->database(), provenance);

  // Every refusal from here on is recorded, in the app's evidence and in its log.
  const Refuse refuse = [&](std::string_view stage, std::string reason) -> Error {
    Error e = denial(stage, call, std::move(reason));
    json::object detail = e.data.as_object();
    detail["workspace"] = call.workspace;
    detail["caller"] = call.caller;
    (void)evidence.append("capability.denied", detail);
    (void)store_.record(call.app, "capability.denied", detail);
    return e;
  };
  HEARTH_ASSIGN_OR_RETURN(const Capability* capability, admit(call, manifest, refuse));

  CallContext context{call,
                      app,
                      manifest,
                      *data,
                      evidence,
                      provenance,
                      store_.data_dir(call.app),
                      json::object{{"capability", call.capability},
                                   {"method", call.method},
                                   {"workspace", call.workspace},
                                   {"caller", call.caller}},
                      refuse};
  return run(*capability, context);
}

Status Bridge::record(std::string_view app_name, std::string_view kind,
                      const json::object& detail) {
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  const auto state = state_of(app.name);
  const std::lock_guard lock(state->mutex);
  const HeldHere held;
  refresh(*state);
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(*state, app));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(*state, app, manifest));
  EvidenceLog evidence(data->database(), provenance_of(app));
  HEARTH_ASSIGN_OR_RETURN(auto entry, evidence.append(kind, detail));
  (void)entry;
  return {};
}

Result<json::value> Bridge::evidence(std::string_view app_name, std::int64_t after) {
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  const auto state = state_of(app.name);
  const std::lock_guard lock(state->mutex);
  const HeldHere held;
  refresh(*state);
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(*state, app));
  HEARTH_ASSIGN_OR_RETURN(auto data, data_of(*state, app, manifest));
  EvidenceLog log(data->database(), provenance_of(app));
  HEARTH_ASSIGN_OR_RETURN(auto entries, log.entries(after));
  const auto verified = log.verify();
  json::object out{
      {"appId", app.name}, {"entries", std::move(entries)}, {"verified", verified.ok()}};
  if (!verified.ok()) out["problem"] = verified.error().message;
  return json::value(std::move(out));
}

Result<json::array> Bridge::list(std::string_view app_name, std::string_view workspace) {
  HEARTH_ASSIGN_OR_RETURN(auto app, store_.find(app_name));
  const auto state = state_of(app.name);
  const std::lock_guard lock(state->mutex);
  const HeldHere held;
  refresh(*state);
  HEARTH_ASSIGN_OR_RETURN(const AppManifest& manifest, manifest_of(*state, app));
  json::array out;
  for (const auto& capability : declared_capabilities(manifest.front_matter)) {
    json::object entry{{"capability", capability}};
    const bool provided = capabilities_->find(capability) != nullptr;
    HEARTH_ASSIGN_OR_RETURN(auto decision, store_.decision(app_name, capability, workspace));
    const auto block = [&entry](std::string_view stage, const std::string& reason) {
      entry["status"] = "blocked";
      entry["stage"] = stage;
      entry["reason"] = reason;
    };
    if (!app.enabled) {
      block("enabled", "the app is not enabled");
    } else if (!provided) {
      block("ready", "hearth does not provide " + capability + " yet");
    } else if (decision == "deny") {
      block("granted", "a grant rule denies it");
    } else if (decision != "allow") {
      block("granted", "it has not been granted");
    } else {
      entry["status"] = "available";
    }
    if (provided) entry["methods"] = capabilities_->provided().at(capability);
    out.emplace_back(std::move(entry));
  }
  return out;
}

}  // namespace hearth::agentapp
