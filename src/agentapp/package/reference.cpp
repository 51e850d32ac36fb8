// The reference CLI's commands, step by step in its order: where it reads a member of null, a
// path that is not a string or a file that cannot be read, Node throws and the CLI exits with
// code 2; jsv::Thrown carries that inside this file and run_reference turns it into the answer.
#include "agentapp/package/reference.hpp"

#include <array>

#include "agentapp/package/jsv.hpp"
#include "agentapp/package/nodefs.hpp"
#include "agentapp/package/yaml_subset.hpp"

namespace hearth::agentapp {

namespace {

using jsv::get;
using jsv::get_opt;
using jsv::truthy;
using V = const json::value*;

constexpr std::string_view kCliVersion = "0.10.0";
constexpr std::array<std::string_view, 6> kV05Plus = {"0.5.0", "0.6.0", "0.7.0",
                                                      "0.8.0", "0.9.0", "0.10.0"};

bool version_at_least(std::string_view version, std::size_t first_index) {
  for (std::size_t i = first_index; i < kV05Plus.size(); ++i) {
    if (kV05Plus[i] == version) return true;
  }
  return false;
}
/// `v05PlusVersions.includes(v)` and its siblings, for a JS value (only strings match).
bool at_least(V v, std::size_t first_index) {
  return v != nullptr && v->is_string() && version_at_least(v->get_string(), first_index);
}
constexpr std::size_t kV05 = 0, kV06 = 1, kV07 = 2, kV08 = 3, kV09 = 4;

template <class T>
T must(Result<T> r) {
  if (!r.ok()) throw jsv::Thrown(r.error().message);
  return std::move(r).value();
}

/// `a || b`: the first truthy operand, else the last.
V either(V a, V b) {
  return truthy(a) ? a : b;
}

/// `base.k1 || base.k2 || ... || fallback`, read left to right and only as far as needed (the
/// first read of a null base is the one that throws, as in Node).
V first_of(V base, std::initializer_list<std::string_view> keys, V fallback) {
  for (const auto key : keys) {
    if (V v = get(base, key); truthy(v)) return v;
  }
  return fallback;
}

bool is(V v, std::string_view s) {
  return v != nullptr && v->is_string() && v->get_string() == s;
}
bool is_true(V v) {
  return v != nullptr && v->is_bool() && v->get_bool();
}
bool is_false(V v) {
  return v != nullptr && v->is_bool() && !v->get_bool();
}

std::string str(V v) {
  return jsv::to_string(v);
}

json::object finding(std::string_view severity, std::string_view path, std::string_view message) {
  return {{"severity", severity}, {"path", path}, {"message", message}};
}
void warn(json::array& findings, std::string_view path, std::string_view message) {
  findings.emplace_back(finding("warning", path, message));
}
void error(json::array& findings, std::string_view path, std::string_view message) {
  findings.emplace_back(finding("error", path, message));
}

/// path.join(root, p) where the CLI passes a manifest value: Node refuses anything but a string.
std::string join_value(const std::string& root, V p) {
  if (p == nullptr || !p->is_string()) {
    std::string received;
    if (p == nullptr) {
      received = "undefined";
    } else if (p->is_object()) {
      received = "an instance of Object";
    } else if (p->is_array()) {
      received = "an instance of Array";
    } else if (p->is_null()) {
      received = "null";
    } else {
      received = std::string("type ") + (p->is_bool() ? "boolean" : "number") + " (" + str(p) + ")";
    }
    throw jsv::Thrown("The \"path\" argument must be of type string. Received " + received);
  }
  return nodefs::join(root, p->get_string());
}

struct Package {
  std::string root;  // resolved
  std::string app_md;
  json::value properties;  // always an object
  V p(std::string_view key) const { return get(&properties, key); }
};

json::object read_app_properties(const std::string& app_md) {
  const std::string content = jsv::decode_utf8(must(nodefs::read_file(app_md)));
  const auto fm = front_matter(content);
  if (!fm) return {};
  return parse_yaml_subset(*fm);
}

/// readLayeredYaml: the parsed file, or null when it is missing or cannot be read.
json::value read_layered(const std::string& root, std::string_view file) {
  const std::string path = nodefs::join(root, file);
  if (!nodefs::exists(path)) return nullptr;
  auto text = nodefs::read_file(path);
  if (!text.ok()) return nullptr;
  return parse_yaml_subset(jsv::decode_utf8(text.value()));
}

V layered_member(const json::value& file, std::string_view key) {
  return get_opt(&file, key);
}

bool is_product_level(const Package& pkg) {
  return jsv::includes({"agent-app", "workflow-app", "domain-app", "customer-app"},
                       pkg.p("appType"));
}

bool uses_lime_agent(const Package& pkg) {
  V caps = get_opt(pkg.p("requires"), "capabilities");
  if (jsv::is_array(caps) && jsv::array_includes(caps, "lime.agent")) return true;
  if (jsv::is_plain_object(caps) && caps->get_object().contains("lime.agent")) return true;
  if (jsv::array_includes(pkg.p("capabilities"), "lime.agent")) return true;
  for (const auto& entry : jsv::as_array(pkg.p("entries"))) {
    if (jsv::array_includes(get(&entry, "requiredCapabilities"), "lime.agent")) return true;
  }
  return false;
}

std::optional<std::string> version_flag(const ReferenceOptions& options) {
  // optionValue(args, '--version') || optionValue(args, '--target'): an empty value is falsy.
  if (options.version && !options.version->empty()) return normalise_version_flag(*options.version);
  if (options.target && !options.target->empty()) return normalise_version_flag(*options.target);
  return std::nullopt;
}

json::object envelope(bool ok, std::string_view status, std::string_view command, json::value app,
                      json::array findings) {
  return {{"ok", ok},
          {"status", status},
          {"command", command},
          {"app", std::move(app)},
          {"findings", std::move(findings)}};
}

// --- validate ------------------------------------------------------------------------------

void check_v05(const Package& pkg, json::array& f) {
  if (!truthy(pkg.p("manifestVersion"))) {
    warn(f, "APP.md", "manifestVersion is recommended for v0.5 packages.");
  }
  V triggers = pkg.p("triggers");
  if (!truthy(triggers) ||
      (!truthy(get(triggers, "keywords")) && !truthy(get(triggers, "scenarios")))) {
    warn(
        f, "APP.md",
        "v0.5 recommends declaring triggers.keywords or triggers.scenarios for AI auto-discovery.");
  }
  V quickstart = pkg.p("quickstart");
  if (!truthy(quickstart) || !truthy(get(quickstart, "entry"))) {
    warn(f, "APP.md", "v0.5 recommends declaring quickstart.entry for first-launch UX.");
  }
  V publisher = pkg.p("publisher");
  if (!truthy(publisher) || !truthy(get(publisher, "publisherId"))) {
    warn(f, "APP.md",
         "v0.5 open-platform: publisher.publisherId is required for catalog identity. Set "
         "publisher: { publisherId, name } in the frontmatter.");
  } else if (!truthy(get(publisher, "name"))) {
    warn(f, "APP.md", "publisher.name is required when publisher.publisherId is set.");
  }
  if (!truthy(pkg.p("displayName"))) {
    warn(f, "APP.md",
         "v0.5 catalog: displayName is recommended so launchers can show a human-readable name.");
  }
  if (!truthy(pkg.p("shortDescription"))) {
    warn(f, "APP.md",
         "v0.5 catalog: shortDescription is recommended for catalog cards (<= 140 chars).");
  }
  if (!truthy(pkg.p("license"))) {
    warn(f, "APP.md",
         "v0.5 open-platform: license is recommended (SPDX id, e.g. Apache-2.0, MIT, UNLICENSED).");
  }
  if (!truthy(pkg.p("homepage")) && !truthy(pkg.p("documentation")) &&
      !truthy(pkg.p("repository"))) {
    warn(f, "APP.md",
         "v0.5 open-platform: at least one of homepage / documentation / repository is "
         "recommended.");
  }
  V support = pkg.p("support");
  if (!truthy(support) || (!truthy(get(support, "email")) && !truthy(get(support, "url")))) {
    warn(f, "APP.md",
         "v0.5 open-platform: support.email or support.url is recommended for ongoing user "
         "support.");
  }
  if (!truthy(pkg.p("updatedAt"))) {
    warn(f, "APP.md",
         "v0.5 open-platform: updatedAt (ISO 8601) is recommended so catalogs can sort by "
         "freshness.");
  }
  V compliance = pkg.p("compliance");
  if (!truthy(compliance) || !truthy(get(compliance, "privacyPolicyUrl"))) {
    warn(f, "APP.md",
         "v0.5 open-platform: compliance.privacyPolicyUrl is recommended; users / tenants need "
         "to review privacy before install.");
  }
  const std::string skills = nodefs::join(pkg.root, "skills");
  if (nodefs::exists(skills) && must(nodefs::is_directory(skills))) {
    for (const auto& entry : must(nodefs::read_dir(skills))) {
      const std::string skill_root = nodefs::join(skills, entry);
      if (!must(nodefs::is_directory(skill_root))) continue;
      if (!nodefs::exists(nodefs::join(skill_root, "SKILL.md"))) {
        error(f, "skills/" + entry + "/SKILL.md",
              "Bundled Skill must include SKILL.md per Agent Skills standard.");
      }
    }
  }
}

void check_bridge(V bridge, json::array& f) {
  constexpr std::string_view kFile = "app.runtime.yaml";
  if (!jsv::is_plain_object(bridge)) return;
  V kind = get(bridge, "kind");
  if (!truthy(kind)) {
    warn(f, kFile,
         "v0.9 agentRuntime.bridge should declare kind, for example app-server-json-rpc.");
    return;
  }
  if (!jsv::includes({"app-server-json-rpc", "host-native", "reference-mock"}, kind)) {
    warn(f, kFile, "Unknown agentRuntime.bridge.kind: " + str(kind) + ".");
    return;
  }
  if (is(kind, "reference-mock")) {
    warn(f, kFile,
         "agentRuntime.bridge.kind=reference-mock is only for reference hosts, tests, or offline "
         "evals; product hosts must not treat it as delivery evidence.");
    return;
  }
  if (!is(kind, "app-server-json-rpc")) return;
  if (!is(get(bridge, "transport"), "host-mediated")) {
    warn(f, kFile,
         "app-server-json-rpc bridge should use transport: host-mediated; apps must not connect "
         "directly to JSON-RPC transport.");
  }
  V surface = get(bridge, "clientSurface");
  if (truthy(surface) && !jsv::includes({"capability-sdk", "host-bridge"}, surface)) {
    warn(f, kFile, "App-facing bridge clientSurface should be capability-sdk or host-bridge.");
  }
  if (!is(get(bridge, "hostBoundary"), "desktop-host-ipc")) {
    warn(f, kFile,
         "app-server-json-rpc bridge should declare hostBoundary: desktop-host-ipc for desktop "
         "hosts.");
  }
  if (!is(get(bridge, "runtimeOwner"), "runtime-core")) {
    warn(f, kFile, "app-server-json-rpc bridge should declare runtimeOwner: runtime-core.");
  }
  if (!truthy(get(bridge, "protocolVersion"))) {
    warn(f, kFile,
         "app-server-json-rpc bridge should declare protocolVersion, for example appserver.v0.");
  }
  static const json::object kEmpty;
  static const json::value kEmptyValue = kEmpty;
  V methods = either(get(bridge, "methods"), &kEmptyValue);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kMethods = {{
      {"initialize", "initialize"},
      {"initialized", "initialized"},
      {"startSession", "agentSession/start"},
      {"readSession", "agentSession/read"},
      {"startTurn", "agentSession/turn/start"},
      {"cancelTurn", "agentSession/turn/cancel"},
      {"respondAction", "agentSession/action/respond"},
      {"events", "agentSession/event"},
      {"listCapabilities", "capability/list"},
      {"readArtifact", "artifact/read"},
      {"exportEvidence", "evidence/export"},
  }};
  for (const auto& [key, expected] : kMethods) {
    V method = get(methods, key);
    if (!truthy(method)) {
      warn(f, kFile,
           "agentRuntime.bridge.methods." + std::string(key) + " should map to " +
               std::string(expected) + ".");
    } else if (!is(method, expected)) {
      warn(f, kFile,
           "agentRuntime.bridge.methods." + std::string(key) + " should be " +
               std::string(expected) + ", got " + str(method) + ".");
    }
  }
  V events = get(bridge, "events");
  if (truthy(events)) {
    V notification = get(events, "notification");
    if (truthy(notification) && !is(notification, "agentSession/event")) {
      warn(f, kFile, "agentRuntime.bridge.events.notification should be agentSession/event.");
    }
    if (!is_false(get(events, "allowUiSynthesis"))) {
      warn(f, kFile,
           "agentRuntime.bridge.events.allowUiSynthesis should be false; runtime events must "
           "derive from RuntimeCore facts.");
    }
  }
}

/// `properties.agentRuntime || runtimeYaml?.agentRuntime || runtimeYaml`.
V agent_runtime_of(const Package& pkg, const json::value& runtime_yaml) {
  return either(either(pkg.p("agentRuntime"), layered_member(runtime_yaml, "agentRuntime")),
                &runtime_yaml);
}

void check_v06(const Package& pkg, json::array& f) {
  constexpr std::string_view kFile = "app.runtime.yaml";
  const json::value runtime_yaml = read_layered(pkg.root, kFile);
  V agent_runtime = agent_runtime_of(pkg, runtime_yaml);
  if (uses_lime_agent(pkg) && !truthy(runtime_yaml) && !truthy(pkg.p("agentRuntime"))) {
    warn(f, kFile,
         "v0.6 recommends app.runtime.yaml for apps that start lime.agent tasks. Declare task "
         "event/result, structured output, approval, session, tool discovery, checkpoint, and "
         "observability policies.");
  }
  if (!truthy(agent_runtime) || !jsv::is_plain_object(agent_runtime)) return;
  static const json::value kEmpty = json::object();
  V task = first_of(agent_runtime, {"agentTask", "agent_task", "task"}, &kEmpty);
  if (!truthy(get(task, "eventSchema")) && !truthy(get(task, "event_schema"))) {
    warn(f, kFile,
         "v0.6 agentRuntime.agentTask.eventSchema should name the task event envelope, e.g. "
         "lime.agent-task-event.v1.");
  }
  if (!truthy(get(task, "resultSchema")) && !truthy(get(task, "result_schema"))) {
    warn(f, kFile,
         "v0.6 agentRuntime.agentTask.resultSchema should name the final result envelope, e.g. "
         "lime.agent-task-result.v1.");
  }
  for (const std::string_view key : {"structuredOutput", "approval", "sessionPolicy",
                                     "toolDiscovery", "checkpointScope", "observability"}) {
    if (!truthy(get(task, key)) && !truthy(get(agent_runtime, key))) {
      warn(f, kFile,
           "v0.6 recommends declaring " + std::string(key) + " policy for lime.agent tasks.");
    }
  }
  V bridge = get(agent_runtime, "bridge");
  if (truthy(bridge)) check_bridge(bridge, f);
}

void check_v07(const Package& pkg, json::array& f) {
  const json::value requirements = read_layered(pkg.root, "app.requirements.yaml");
  const json::value boundary = read_layered(pkg.root, "app.boundary.yaml");
  const json::value integrations = read_layered(pkg.root, "app.integrations.yaml");
  const json::value operations = read_layered(pkg.root, "app.operations.yaml");
  const bool product = is_product_level(pkg);
  if (product && requirements.is_null()) {
    warn(f, "app.requirements.yaml",
         "v0.7 recommends app.requirements.yaml so business requirements, MVP scope, non-goals, "
         "and acceptance criteria are explicit.");
  }
  if (product && boundary.is_null()) {
    warn(f, "app.boundary.yaml",
         "v0.7 recommends app.boundary.yaml so App, Host, Cloud, connector, external system, and "
         "human responsibilities are explicit.");
  }
  if (product && operations.is_null()) {
    warn(f, "app.operations.yaml",
         "v0.7 recommends app.operations.yaml so side effects, approval, dry-run, and evidence "
         "requirements are explicit.");
  }
  const auto& integration_items = jsv::as_array(layered_member(integrations, "integrations"));
  const auto& operation_items = jsv::as_array(layered_member(operations, "operations"));
  if (!integration_items.empty() && !truthy(get_opt(pkg.p("requires"), "capabilities"))) {
    warn(f, "APP.md",
         "v0.7 integrations should be paired with requires.capabilities so hosts can expose "
         "connector/tool/secrets/policy surfaces.");
  }
  static const json::value kIntegration = "integration";
  static const json::value kOperation = "operation";
  for (const auto& item : integration_items) {
    const std::string key = str(first_of(&item, {"key", "id"}, &kIntegration));
    if (!truthy(get(&item, "provider"))) {
      warn(f, "app.integrations.yaml", "Integration is missing provider: " + key + ".");
    }
    if (!truthy(get(&item, "hostCapability")) && !truthy(get(&item, "cloudCapability"))) {
      warn(f, "app.integrations.yaml",
           "Integration should declare hostCapability or cloudCapability: " + key + ".");
    }
  }
  for (const auto& item : operation_items) {
    const std::string key = str(first_of(&item, {"key", "id"}, &kOperation));
    V side_effect = get(&item, "sideEffect");
    if (!truthy(side_effect)) side_effect = get(&item, "side_effect");
    if (truthy(side_effect) && !is(side_effect, "none") &&
        !is_true(get(&item, "evidenceRequired")) && !is_true(get(&item, "evidence_required"))) {
      warn(f, "app.operations.yaml",
           "Operation with sideEffect should declare evidenceRequired: " + key + ".");
    }
    const std::string effect = str(side_effect);
    if ((effect == "external_publish" || effect == "external_delete" || effect == "bulk_update") &&
        !is_true(get(&item, "approvalRequired")) && !is_true(get(&item, "approval_required"))) {
      warn(f, "app.operations.yaml",
           "High-risk operation should declare approvalRequired: " + key + ".");
    }
  }
}

void check_v08(const Package& pkg, json::array& f) {
  constexpr std::string_view kFile = "app.install.yaml";
  const json::value install_yaml = read_layered(pkg.root, kFile);
  V install = either(pkg.p("install"), get_opt(&install_yaml, "install"));
  if (is_product_level(pkg) && !truthy(install)) {
    warn(f, kFile,
         "v0.8 recommends app.install.yaml so in-lime, standalone, and runtime-backed "
         "installation modes are explicit.");
    return;
  }
  if (!truthy(install) || !jsv::is_plain_object(install)) return;
  V modes = get(install, "modes");
  if (jsv::as_array(modes).empty()) {
    warn(f, kFile,
         "v0.8 install.modes should include at least one of in_lime, standalone, or "
         "runtime_backed.");
  }
  for (const auto& mode : jsv::as_array(modes)) {
    if (!jsv::includes({"in_lime", "standalone", "runtime_backed", "web_host"}, &mode)) {
      warn(f, kFile, "Unknown v0.8 install mode: " + str(&mode) + ".");
    }
  }
  const bool standalone = jsv::array_includes(modes, "standalone");
  const bool runtime_backed = jsv::array_includes(modes, "runtime_backed");
  if ((standalone || runtime_backed) && !truthy(get(install, "runtime"))) {
    warn(f, kFile, "Standalone or runtime-backed apps should declare install.runtime constraints.");
  }
  if (standalone && !truthy(get_opt(get(install, "standalone"), "shell"))) {
    warn(f, kFile,
         "Standalone apps should declare install.standalone.shell, for example lime-app-shell.");
  }
  if (standalone && !truthy(get_opt(pkg.p("presentation"), "icon")) &&
      !truthy(get_opt(get(install, "branding"), "icon"))) {
    warn(f, kFile,
         "Standalone apps should declare an icon through presentation.icon or "
         "install.branding.icon.");
  }
  if (runtime_backed && !truthy(get_opt(get(install, "runtimeBacked"), "requires"))) {
    warn(f, kFile,
         "Runtime-backed apps should declare install.runtimeBacked.requires, for example "
         "lime-runtime.");
  }
}

void check_runtime_distribution(V install, json::array& f) {
  constexpr std::string_view kFile = "app.install.yaml";
  static const json::value kEmpty = json::object();
  V runtime = either(get(install, "runtime"), &kEmpty);
  if (!truthy(get(runtime, "protocolVersion"))) {
    warn(f, kFile,
         "Standalone or runtime-backed apps should declare install.runtime.protocolVersion, for "
         "example appserver.v0.");
  }
  V client = get(runtime, "clientPackage");
  if (!truthy(get_opt(client, "name"))) {
    warn(f, kFile,
         "Standalone or runtime-backed apps should declare install.runtime.clientPackage.name, "
         "for example app-server-client.");
  }
  if (!truthy(get_opt(client, "version"))) {
    warn(f, kFile,
         "Standalone or runtime-backed apps should declare "
         "install.runtime.clientPackage.version.");
  }
  V release = get(runtime, "releaseManifest");
  if (!truthy(get_opt(release, "path")) && !truthy(get_opt(release, "url"))) {
    warn(f, kFile,
         "Standalone or runtime-backed apps should declare install.runtime.releaseManifest.path "
         "or url.");
  }
  if (truthy(release) && !is_true(get(release, "sha256Required"))) {
    warn(f, kFile,
         "install.runtime.releaseManifest.sha256Required should be true for runtime "
         "distribution.");
  }
  if (truthy(release) && !is_false(get(release, "allowEnvOverrideInProduction"))) {
    warn(f, kFile,
         "install.runtime.releaseManifest.allowEnvOverrideInProduction should be false; env "
         "overrides are development-only.");
  }
  if (jsv::array_includes(get(install, "modes"), "standalone")) {
    V sidecar = get(runtime, "sidecar");
    if (!truthy(get_opt(sidecar, "binary"))) {
      warn(f, kFile,
           "Standalone apps should declare install.runtime.sidecar.binary, for example "
           "app-server.");
    }
    if (truthy(sidecar) && !is_true(get(sidecar, "sha256Required"))) {
      warn(f, kFile,
           "install.runtime.sidecar.sha256Required should be true for packaged sidecar "
           "binaries.");
    }
  }
}

void check_v09(const Package& pkg, json::array& f) {
  const json::value runtime_yaml = read_layered(pkg.root, "app.runtime.yaml");
  V agent_runtime = agent_runtime_of(pkg, runtime_yaml);
  if (uses_lime_agent(pkg) && (!truthy(agent_runtime) || !truthy(get(agent_runtime, "bridge")))) {
    warn(f, "app.runtime.yaml",
         "Apps using lime.agent should declare agentRuntime.bridge.kind=app-server-json-rpc so "
         "hosts can map SDK tasks to App Server JSON-RPC.");
  }
  const json::value install_yaml = read_layered(pkg.root, "app.install.yaml");
  V install = either(pkg.p("install"), get_opt(&install_yaml, "install"));
  if (truthy(install)) {
    V modes = get(install, "modes");
    if (jsv::array_includes(modes, "standalone") || jsv::array_includes(modes, "runtime_backed")) {
      check_runtime_distribution(install, f);
    }
  }
}

void check_v10(const Package& pkg, json::array& f) {
  static const json::value kEmpty = json::object();
  V storage = either(pkg.p("storage"), &kEmpty);
  if (is_product_level(pkg) && !jsv::is_plain_object(storage)) {
    warn(f, "storage",
         "Product apps should declare app-local storage isolation. Local desktop hosts should "
         "default to host-managed per-app SQLite storage.");
  } else if (jsv::is_plain_object(storage)) {
    if (!truthy(get(storage, "placement"))) {
      warn(f, "storage",
           "Declare storage.placement, for example local-sqlite for desktop or server-postgresql "
           "for cloud/team storage.");
    }
    if (!truthy(get(storage, "isolation"))) {
      warn(f, "storage",
           "Declare storage.isolation, for example per-app-database, per-app-schema, or "
           "per-app-namespace.");
    }
    V placement = get(storage, "placement");
    if (truthy(placement) && str(placement).find("postgresql") != std::string::npos &&
        !is_false(get(storage, "localDefault"))) {
      warn(f, "storage",
           "PostgreSQL should not be a consumer desktop install prerequisite. Use it for cloud, "
           "enterprise, or team-shared backends, and keep local desktop defaults on SQLite.");
    }
  }
  static const json::value kAppBackend = "app-backend";
  for (const auto& service : jsv::as_array(pkg.p("services"))) {
    if (!is(get(&service, "kind"), "app-backend")) continue;
    const std::string key = str(either(get(&service, "key"), &kAppBackend));
    V protocol = get(&service, "protocol");
    V plane = get(&service, "executionPlane");
    if (!truthy(protocol)) {
      warn(f, "services", "App-backend service should declare protocol: " + key + ".");
    }
    if (!truthy(get(&service, "language"))) {
      warn(f, "services", "App-backend service should declare language: " + key + ".");
    }
    if (!truthy(plane)) {
      warn(f, "services",
           "App-backend service should declare executionPlane: " + key +
               ". Use client-local for client-supervised services or cloud-remote for "
               "server-assisted services.");
    }
    if (truthy(protocol) &&
        !jsv::includes({"stdio-jsonrpc", "local-http", "local-socket", "wasm", "remote-http"},
                       protocol)) {
      warn(f, "services", "Unknown app-backend protocol for " + key + ": " + str(protocol) + ".");
    }
    if (is(plane, "client-local") && is(protocol, "remote-http")) {
      warn(f, "services",
           "client-local app-backend " + key +
               " should use stdio-jsonrpc, local-http, local-socket, or wasm, not remote-http.");
    }
    if (is(plane, "cloud-remote") && !is(protocol, "remote-http")) {
      warn(f, "services",
           "cloud-remote app-backend " + key +
               " should use remote-http and declare endpoint plus data boundary policy.");
    }
    if (is(plane, "cloud-remote") && !truthy(get(&service, "endpoint"))) {
      warn(f, "services", "cloud-remote app-backend " + key + " should declare endpoint.");
    }
    if (is(plane, "client-local") && !truthy(get(&service, "command")) &&
        !truthy(get(&service, "binary")) && !truthy(get(&service, "path")) &&
        !is(protocol, "wasm")) {
      warn(f, "services",
           "client-local app-backend " + key +
               " should declare command, binary, or path so the host can supervise lifecycle.");
    }
  }
}

void check_entries(const Package& pkg, json::array& f) {
  static const json::value kEntry = "entry";
  for (const auto& entry : jsv::as_array(pkg.p("entries"))) {
    const std::string key = str(first_of(&entry, {"key", "title"}, &kEntry));
    V kind = get(&entry, "kind");
    if (!truthy(get(&entry, "key"))) {
      warn(f, "entries", "Entry is missing key: " + jsv::stringify(entry) + ".");
    }
    if (!truthy(kind)) warn(f, "entries", "Entry is missing kind: " + key + ".");
    if (truthy(kind) && !jsv::includes({"page", "panel", "expert-chat", "command", "workflow",
                                        "artifact", "background-task", "settings"},
                                       kind)) {
      if (jsv::includes({"home", "scene"}, kind)) {
        f.emplace_back(json::object{
            {"severity", "warning"},
            {"code", "deprecated-compat"},
            {"path", "entries"},
            {"message", "Deprecated legacy entry kind for " + key + ": " + str(kind) +
                            ". Use page, command, workflow, artifact, background-task, or "
                            "settings for manifestVersion 0.3."}});
        V version = pkg.p("manifestVersion");
        if (truthy(version) && str(version).rfind("0.3", 0) == 0) {
          error(f, "entries",
                "entry kind " + str(kind) + " is not valid for manifestVersion 0.3: " + key + ".");
        }
      } else {
        error(f, "entries", "Unknown entry kind for " + key + ": " + str(kind) + ".");
      }
    }
    if (!truthy(get(&entry, "title"))) warn(f, "entries", "Entry is missing title: " + key + ".");
    if (is(kind, "page") && !truthy(get(&entry, "route"))) {
      warn(f, "entries", "Page entry is missing route: " + key + ".");
    }
    if (is(kind, "panel") && !truthy(get(&entry, "panel"))) {
      warn(f, "entries", "Panel entry is missing panel id: " + key + ".");
    }
    if (is(kind, "command") && !truthy(get(&entry, "command"))) {
      warn(f, "entries", "Command entry is missing command: " + key + ".");
    }
    if (is(kind, "workflow") && !truthy(get(&entry, "workflow"))) {
      warn(f, "entries", "Workflow entry is missing workflow path or key: " + key + ".");
    }
    if (is(kind, "expert-chat") && !truthy(get(&entry, "persona"))) {
      warn(f, "entries", "Expert-chat entry is missing persona: " + key + ".");
    }
  }
}

void check_directory_refs(const Package& pkg, V items, std::string_view directory, json::array& f) {
  for (const auto& item : jsv::as_array(items)) {
    V path = get(&item, "path");
    if (!truthy(path)) continue;
    if (!nodefs::exists(join_value(pkg.root, path))) {
      warn(f, directory, "Referenced path does not exist: " + str(path) + ".");
    }
  }
}

void check_runtime_package_refs(const Package& pkg, json::array& f) {
  V runtime_package = pkg.p("runtimePackage");
  if (!jsv::is_plain_object(runtime_package)) return;
  const auto& o = runtime_package->get_object();
  for (const auto key : jsv::own_keys(o)) {
    V value = o.if_contains(key);
    if (!jsv::is_plain_object(value)) continue;
    for (const std::string_view field : {"path", "schema", "migrations"}) {
      V ref = get(value, field);
      if (!truthy(ref)) continue;
      if (!nodefs::exists(join_value(pkg.root, ref))) {
        warn(f, "runtimePackage",
             "Referenced " + std::string(key) + "." + std::string(field) +
                 " does not exist: " + str(ref) + ".");
      }
    }
  }
}

void check_storage_refs(const Package& pkg, json::array& f) {
  V storage = pkg.p("storage");
  if (!jsv::is_plain_object(storage)) return;
  for (const std::string_view field : {"schema", "migrations"}) {
    V ref = get(storage, field);
    if (!truthy(ref)) continue;
    if (!nodefs::exists(join_value(pkg.root, ref))) {
      warn(f, "storage", "Referenced " + std::string(field) + " does not exist: " + str(ref) + ".");
    }
  }
}

void check_executable_policy(const Package& pkg, json::array& f) {
  bool executable = false;
  for (const auto& entry : jsv::as_array(pkg.p("entries"))) {
    if (jsv::includes({"command", "workflow", "background-task"}, get(&entry, "kind"))) {
      executable = true;
    }
  }
  bool service_executable = false;
  for (const auto& service : jsv::as_array(pkg.p("services"))) {
    if (jsv::includes({"worker", "background-task", "scheduler", "tool-adapter", "app-backend"},
                      get(&service, "kind"))) {
      service_executable = true;
    }
  }
  const bool secrets = !jsv::as_array(pkg.p("secrets")).empty();
  const bool permissions = !jsv::as_array(pkg.p("permissions")).empty();
  if ((executable || service_executable || secrets) && !permissions) {
    warn(f, "permissions",
         "Executable entries, services, or secrets should declare permissions for host policy "
         "review.");
  }
}

json::value app_name(const Package& pkg) {
  V name = pkg.p("name");
  return truthy(name) ? *name : json::value(nodefs::basename(pkg.root));
}

json::object validate(std::string_view app_path, const ReferenceOptions& options) {
  Package pkg;
  pkg.root = nodefs::resolve(app_path);
  json::array f;
  const auto target = version_flag(options);
  if (!nodefs::exists(pkg.root) || !must(nodefs::is_directory(pkg.root))) {
    error(f, ".", "App path is not a directory.");
    return envelope(false, "failed", "validate", json::string(nodefs::basename(pkg.root)), f);
  }
  pkg.app_md = nodefs::join(pkg.root, "APP.md");
  if (!nodefs::exists(pkg.app_md)) {
    error(f, "APP.md", "Missing required APP.md.");
    return envelope(false, "failed", "validate", json::string(nodefs::basename(pkg.root)), f);
  }
  pkg.properties = read_app_properties(pkg.app_md);
  for (const std::string_view field : {"name", "description", "version", "status", "appType"}) {
    if (!truthy(pkg.p(field))) {
      error(f, "APP.md", "Missing required frontmatter field: " + std::string(field) + ".");
    }
  }
  const std::string base = nodefs::basename(pkg.root);
  V name = pkg.p("name");
  if (truthy(name) && !is(name, base)) {
    warn(f, "APP.md", "name does not match parent directory: " + str(name) + " != " + base + ".");
  }
  V status = pkg.p("status");
  if (truthy(status) &&
      !jsv::includes({"draft", "ready", "needs-review", "deprecated", "archived"}, status)) {
    error(f, "APP.md", "Unknown status: " + str(status) + ".");
  }
  V app_type = pkg.p("appType");
  if (truthy(app_type) &&
      !jsv::includes({"agent-app", "workflow-app", "domain-app", "customer-app", "custom"},
                     app_type)) {
    error(f, "APP.md", "Unknown appType: " + str(app_type) + ".");
  }
  V manifest_version = pkg.p("manifestVersion");
  if (truthy(manifest_version) && !at_least(manifest_version, kV05) &&
      !is(manifest_version, "0.3.0") && !is(manifest_version, "0.4.0")) {
    warn(f, "APP.md",
         "Unknown manifestVersion: " + str(manifest_version) +
             ". Supported: 0.3.0, 0.4.0, 0.5.0, 0.6.0, 0.7.0, 0.8.0, 0.9.0, 0.10.0.");
  }
  if (target && truthy(manifest_version) && !is(manifest_version, *target)) {
    warn(f, "APP.md",
         "manifestVersion " + str(manifest_version) + " does not match requested --version " +
             *target + ".");
  }
  const json::value effective =
      target ? json::value(json::string(*target))
             : (truthy(manifest_version) ? *manifest_version : json::value("0.4.0"));
  if (at_least(&effective, kV05)) check_v05(pkg, f);
  if (at_least(&effective, kV06)) check_v06(pkg, f);
  if (at_least(&effective, kV07)) check_v07(pkg, f);
  if (at_least(&effective, kV08)) check_v08(pkg, f);
  if (at_least(&effective, kV09)) check_v09(pkg, f);
  if (is(&effective, "0.10.0")) check_v10(pkg, f);
  check_entries(pkg, f);
  if (is_product_level(pkg)) {
    if (!truthy(pkg.p("runtimePackage"))) {
      warn(f, "runtimePackage",
           "Product-level apps should declare runtimePackage so hosts can load UI, worker, "
           "storage, and workflow implementation.");
    }
    if (jsv::as_array(pkg.p("entries")).empty()) {
      warn(f, "entries", "Product-level apps should expose at least one entry.");
    }
  }
  check_directory_refs(pkg, pkg.p("skillRefs"), "skills", f);
  check_directory_refs(pkg, pkg.p("knowledgeTemplates"), "knowledge-templates", f);
  check_directory_refs(pkg, pkg.p("toolRefs"), "tools", f);
  check_directory_refs(pkg, pkg.p("artifactTypes"), "artifacts", f);
  check_directory_refs(pkg, pkg.p("evals"), "evals", f);
  check_directory_refs(pkg, pkg.p("overlayTemplates"), "overlay-templates", f);
  check_runtime_package_refs(pkg, f);
  check_storage_refs(pkg, f);
  check_executable_policy(pkg, f);

  bool ok = true;
  for (const auto& item : f) ok = ok && item.at("severity") != "error";
  json::object out = envelope(ok, ok ? "passed" : "needs-review", "validate", app_name(pkg), f);
  out["manifestHash"] = must(nodefs::manifest_hash(pkg.app_md));
  return out;
}

// --- read-properties, to-catalog, project -------------------------------------------------

Package read_package(std::string_view app_path) {
  Package pkg;
  pkg.root = nodefs::resolve(app_path);
  pkg.app_md = nodefs::join(pkg.root, "APP.md");
  if (!nodefs::exists(pkg.app_md)) throw jsv::Thrown("Missing APP.md");
  pkg.properties = read_app_properties(pkg.app_md);
  return pkg;
}

json::object to_catalog(const Package& pkg) {
  json::object out;
  for (const std::string_view key :
       {"name", "description", "version", "status", "appType", "manifestVersion", "runtimeTargets",
        "requires", "entries", "capabilities", "install", "ui", "storage", "services",
        "presentation", "compatibility", "metadata"}) {
    if (V v = pkg.p(key)) out[key] = *v;
  }
  return out;
}

/// `{ ...item, provenance }`: the own enumerable members of the item (a string's UTF-16 code
/// units, an array's elements; nothing of other primitives), then provenance.
json::object spread_with(const json::value& item, const json::value& provenance) {
  json::object out;
  if (item.is_object()) {
    for (const auto key : jsv::own_keys(item.get_object())) out[key] = item.get_object().at(key);
  } else if (item.is_array()) {
    std::size_t i = 0;
    for (const auto& element : item.get_array()) out[std::to_string(i++)] = element;
  } else if (item.is_string()) {
    std::size_t i = 0;
    for (auto& unit : jsv::utf16_units(item.get_string())) {
      out[std::to_string(i++)] = std::move(unit);
    }
  }
  out["provenance"] = provenance;
  return out;
}

json::array with_provenance(V items, const json::value& provenance) {
  json::array out;
  for (const auto& item : jsv::as_array(items)) out.emplace_back(spread_with(item, provenance));
  return out;
}

json::value or_default(V v, const json::value& fallback) {
  return truthy(v) ? *v : fallback;
}

json::object project(const Package& pkg) {
  const std::string manifest_hash = must(nodefs::manifest_hash(pkg.app_md));
  V declared_hash = get_opt(pkg.p("runtimePackage"), "hash");
  const json::value package_hash =
      truthy(declared_hash) ? *declared_hash : json::value(must(nodefs::package_hash(pkg.root)));
  json::value provenance = json::object{
      {"appName", app_name(pkg)},    {"appVersion", or_default(pkg.p("version"), "0.0.0")},
      {"packageHash", package_hash}, {"manifestHash", manifest_hash},
      {"standard", "agentapp"},      {"standardVersion", kCliVersion},
  };
  json::object app;
  for (const std::string_view key :
       {"name", "description", "version", "status", "appType", "manifestVersion"}) {
    if (V v = pkg.p(key)) app[key] = *v;
  }
  app["runtimeTargets"] = jsv::as_array(pkg.p("runtimeTargets"));
  app["presentation"] = or_default(pkg.p("presentation"), json::object());

  const json::value runtime_yaml = read_layered(pkg.root, "app.runtime.yaml");
  const json::value requirements_yaml = read_layered(pkg.root, "app.requirements.yaml");
  const json::value boundary_yaml = read_layered(pkg.root, "app.boundary.yaml");
  const json::value integrations_yaml = read_layered(pkg.root, "app.integrations.yaml");
  const json::value operations_yaml = read_layered(pkg.root, "app.operations.yaml");
  const json::value install_yaml = read_layered(pkg.root, "app.install.yaml");
  const auto first = [](V a, V b, json::value fallback) {
    if (truthy(a)) return *a;
    if (truthy(b)) return *b;
    return fallback;
  };

  json::object out;
  out["ok"] = true;
  out["command"] = "project";
  out["app"] = std::move(app);
  out["capabilityRequirements"] = or_default(pkg.p("requires"), json::object());
  out["entries"] = with_provenance(pkg.p("entries"), provenance);
  out["ui"] = or_default(pkg.p("ui"), json::object());
  out["storage"] = or_default(pkg.p("storage"), json::object());
  out["services"] = with_provenance(pkg.p("services"), provenance);
  out["workflows"] = with_provenance(pkg.p("workflows"), provenance);
  out["permissions"] = with_provenance(pkg.p("permissions"), provenance);
  out["knowledgeTemplates"] = with_provenance(pkg.p("knowledgeTemplates"), provenance);
  out["toolRequirements"] = with_provenance(pkg.p("toolRefs"), provenance);
  out["artifactTypes"] = with_provenance(pkg.p("artifactTypes"), provenance);
  out["evals"] = with_provenance(pkg.p("evals"), provenance);
  out["events"] = with_provenance(pkg.p("events"), provenance);
  out["secrets"] = with_provenance(pkg.p("secrets"), provenance);
  out["overlayTemplates"] = with_provenance(pkg.p("overlayTemplates"), provenance);
  out["lifecycle"] = or_default(pkg.p("lifecycle"), json::object());
  out["agentRuntime"] =
      first(pkg.p("agentRuntime"), layered_member(runtime_yaml, "agentRuntime"), json::object());
  out["requirements"] = first(pkg.p("requirements"), &requirements_yaml, json::object());
  out["boundary"] = first(pkg.p("boundary"), &boundary_yaml, json::object());
  out["integrations"] = first(pkg.p("integrations"),
                              layered_member(integrations_yaml, "integrations"), json::array());
  out["operations"] =
      first(pkg.p("operations"), layered_member(operations_yaml, "operations"), json::array());
  out["install"] = first(pkg.p("install"), layered_member(install_yaml, "install"), json::object());
  out["provenance"] = std::move(provenance);
  return out;
}

// --- readiness -------------------------------------------------------------------------------

void requirement_checks(std::string_view kind, V items, json::array& checks) {
  const json::value kind_value = json::string(kind);
  for (const auto& item : jsv::as_array(items)) {
    V req = get(&item, "required");
    const bool required = is_true(req) || is(req, "true");
    json::value key = *first_of(&item, {"key", "id", "name"}, &kind_value);
    checks.emplace_back(json::object{
        {"severity", required ? "warning" : "info"},
        {"kind", kind},
        {"key", std::move(key)},
        {"required", required},
        {"message", std::string(kind) + (required ? " requirement must be satisfied by the host "
                                                    "before running."
                                                  : " requirement is optional.")}});
  }
}

void capability_checks(V caps, json::array& checks) {
  if (jsv::is_array(caps)) {
    for (const auto& key : caps->get_array()) {
      checks.emplace_back(
          json::object{{"severity", "info"},
                       {"kind", "capability"},
                       {"key", key},
                       {"required", true},
                       {"version", nullptr},
                       {"message", "Host must satisfy capability " + str(&key) + "."}});
    }
    return;
  }
  if (!truthy(caps) || !caps->is_object()) return;
  const auto& o = caps->get_object();
  for (const auto key : jsv::own_keys(o)) {
    const json::value& range = o.at(key);
    checks.emplace_back(json::object{
        {"severity", "info"},
        {"kind", "capability"},
        {"key", key},
        {"required", true},
        {"version", range},
        {"message", "Host must satisfy capability " + std::string(key) + "@" + str(&range) + "."}});
  }
}

void install_checks(V install, json::array& checks) {
  if (!truthy(install) || !jsv::is_plain_object(install)) return;
  V modes = get(install, "modes");
  if (jsv::array_includes(modes, "standalone")) {
    checks.emplace_back(json::object{
        {"severity", "info"},
        {"kind", "install"},
        {"key", "standalone"},
        {"required", false},
        {"message",
         "Standalone packaging requires a compatible App Shell and local Runtime profile."}});
  }
  if (jsv::array_includes(modes, "runtime_backed")) {
    checks.emplace_back(json::object{
        {"severity", "info"},
        {"kind", "install"},
        {"key", "runtime_backed"},
        {"required", false},
        {"message",
         "Runtime-backed packaging requires a system Lime Runtime that satisfies install.runtime "
         "constraints."}});
  }
}

json::object readiness(const Package& pkg, const ReferenceOptions& options) {
  json::array checks;
  requirement_checks("skill", pkg.p("skillRefs"), checks);
  requirement_checks("knowledge", pkg.p("knowledgeTemplates"), checks);
  requirement_checks("tool", pkg.p("toolRefs"), checks);
  requirement_checks("artifact", pkg.p("artifactTypes"), checks);
  requirement_checks("eval", pkg.p("evals"), checks);
  requirement_checks("service", pkg.p("services"), checks);
  requirement_checks("workflow", pkg.p("workflows"), checks);
  requirement_checks("secret", pkg.p("secrets"), checks);
  requirement_checks("overlay", pkg.p("overlayTemplates"), checks);
  const json::value integrations = read_layered(pkg.root, "app.integrations.yaml");
  const json::value operations = read_layered(pkg.root, "app.operations.yaml");
  const json::value install_yaml = read_layered(pkg.root, "app.install.yaml");
  V install = either(pkg.p("install"), layered_member(install_yaml, "install"));
  requirement_checks("integration", layered_member(integrations, "integrations"), checks);
  requirement_checks("operation", layered_member(operations, "operations"), checks);
  capability_checks(get_opt(pkg.p("requires"), "capabilities"), checks);
  install_checks(install, checks);

  const std::string workspace = options.workspace.value_or("");
  if (!workspace.empty()) {
    const std::string resolved = nodefs::resolve(workspace);
    if (!nodefs::exists(resolved) || !must(nodefs::is_directory(resolved))) {
      checks.emplace_back(json::object{{"severity", "error"},
                                       {"kind", "workspace"},
                                       {"key", workspace},
                                       {"message", "Workspace path is not a directory."}});
    }
  }
  if (jsv::as_array(pkg.p("entries")).empty()) {
    checks.emplace_back(json::object{{"severity", "warning"},
                                     {"kind", "entry"},
                                     {"key", "entries"},
                                     {"message", "No app entries declared."}});
  }
  if (!jsv::array_includes(pkg.p("runtimeTargets"), "local")) {
    checks.emplace_back(
        json::object{{"severity", "warning"},
                     {"kind", "runtime"},
                     {"key", "runtimeTargets"},
                     {"message", "App does not explicitly declare local runtime support."}});
  }
  if (!truthy(pkg.p("runtimePackage")) && is_product_level(pkg)) {
    checks.emplace_back(
        json::object{{"severity", "warning"},
                     {"kind", "runtimePackage"},
                     {"key", "runtimePackage"},
                     {"required", true},
                     {"message", "Product-level apps should declare a runtime package."}});
  }
  bool has_error = false;
  bool has_warning = false;
  for (const auto& check : checks) {
    has_error = has_error || check.at("severity") == "error";
    has_warning = has_warning || check.at("severity") == "warning";
  }
  json::object out;
  out["ok"] = !has_error;
  out["status"] = has_error ? "failed" : has_warning ? "needs-setup" : "ready";
  out["command"] = "readiness";
  out["app"] = app_name(pkg);
  out["workspace"] = workspace.empty() ? json::value(nullptr) : json::value(workspace);
  out["checks"] = std::move(checks);
  return out;
}

// --- migrate-check ---------------------------------------------------------------------------

json::object migrate_check(std::string_view app_path, const ReferenceOptions& options) {
  Package pkg;
  pkg.root = nodefs::resolve(app_path);
  json::array f;
  const std::string base = nodefs::basename(pkg.root);
  if (!nodefs::exists(pkg.root) || !must(nodefs::is_directory(pkg.root))) {
    error(f, ".", "App path is not a directory.");
    return envelope(false, "failed", "migrate-check", json::string(base), f);
  }
  pkg.app_md = nodefs::join(pkg.root, "APP.md");
  if (!nodefs::exists(pkg.app_md)) {
    error(f, "APP.md", "Missing required APP.md.");
    return envelope(false, "failed", "migrate-check", json::string(base), f);
  }
  pkg.properties = read_app_properties(pkg.app_md);
  const std::string target = version_flag(options).value_or("0.10.0");
  V manifest_version = pkg.p("manifestVersion");
  const json::value source = truthy(manifest_version) ? *manifest_version : json::value("0.3.0");
  json::array gaps;
  const auto gap = [&gaps](std::string_view field, std::string_view suggestion) {
    gaps.emplace_back(json::object{{"field", field}, {"suggestion", suggestion}});
  };
  const auto missing = [&pkg](std::string_view file) {
    return !nodefs::exists(nodefs::join(pkg.root, file));
  };
  if (is(&source, target)) {
    f.emplace_back(json::object{
        {"severity", "info"},
        {"path", "APP.md"},
        {"message", "Already on manifestVersion " + target + ". No migration required."}});
  }
  if (version_at_least(target, kV05)) {
    if (!truthy(pkg.p("triggers"))) {
      gap("triggers", "Add triggers.keywords and triggers.scenarios to APP.md frontmatter.");
    }
    if (!truthy(pkg.p("quickstart"))) {
      gap("quickstart", "Add quickstart.entry pointing to a default entry key.");
    }
    if (!truthy(pkg.p("skills"))) {
      gap("skills",
          "Move skillRefs into skills.bundled / skills.references and add SKILL.md under "
          "skills/.");
    }
    for (const std::string_view file :
         {"app.capabilities.yaml", "app.entries.yaml", "app.permissions.yaml", "app.errors.yaml",
          "app.i18n.yaml", "app.signature.yaml", "evals/readiness.yaml", "evals/health.yaml"}) {
      if (missing(file)) {
        gap(file, "Create " + std::string(file) + " for layered v0.5 configuration.");
      }
    }
    if (missing("locales")) {
      gap("locales/", "Add locales/ directory with translation files for supported locales.");
    }
  }
  if (version_at_least(target, kV06)) {
    if (missing("app.runtime.yaml")) {
      gap("app.runtime.yaml", "Create app.runtime.yaml for v0.6 Agent task runtime contracts.");
    }
    if (uses_lime_agent(pkg) && !truthy(pkg.p("agentRuntime")) && missing("app.runtime.yaml")) {
      gap("agentRuntime",
          "Declare agentRuntime policies for structured output, approvals, session "
          "resume/fork, tool discovery, checkpoint scope, and observability.");
    }
  }
  if (version_at_least(target, kV07)) {
    for (const std::string_view file : {"app.requirements.yaml", "app.boundary.yaml",
                                        "app.integrations.yaml", "app.operations.yaml"}) {
      if (missing(file)) {
        gap(file, "Create " + std::string(file) +
                      " for v0.7 requirement boundary and capability handoff contracts.");
      }
    }
  }
  if (version_at_least(target, kV08)) {
    if (missing("app.install.yaml")) {
      gap("app.install.yaml",
          "Create app.install.yaml for v0.8 standalone installation and runtime separation "
          "contracts.");
    }
    if (!truthy(pkg.p("install")) && missing("app.install.yaml")) {
      gap("install",
          "Declare install.modes with in_lime, standalone, runtime_backed, or web_host support.");
    }
  }
  if (version_at_least(target, kV09)) {
    const json::value runtime_yaml = read_layered(pkg.root, "app.runtime.yaml");
    V agent_runtime = agent_runtime_of(pkg, runtime_yaml);
    if (uses_lime_agent(pkg) && (!truthy(agent_runtime) || !truthy(get(agent_runtime, "bridge")))) {
      gap("agentRuntime.bridge",
          "Declare agentRuntime.bridge.kind=app-server-json-rpc and map SDK tasks to App Server "
          "JSON-RPC methods.");
    }
  }
  if (target == "0.10.0") {
    V storage = pkg.p("storage");
    if (!truthy(storage)) {
      gap("storage",
          "Declare app-local storage placement and isolation. Local desktop defaults should use "
          "host-managed per-app SQLite storage.");
    } else {
      if (!truthy(get(storage, "placement"))) {
        gap("storage.placement",
            "Declare local-sqlite for local desktop storage or server-postgresql for cloud/team "
            "storage.");
      }
      if (!truthy(get(storage, "isolation"))) {
        gap("storage.isolation",
            "Declare per-app-database, per-app-schema, or per-app-namespace isolation.");
      }
    }
  }
  const bool ok = gaps.empty();
  json::object out =
      envelope(ok, ok ? "ready" : "needs-setup", "migrate-check", json::string(base), f);
  out["sourceVersion"] = source;
  out["targetVersion"] = target;
  out["gaps"] = std::move(gaps);
  return out;
}

}  // namespace

std::optional<ReferenceCommand> reference_command(std::string_view name) {
  if (name == "validate") return ReferenceCommand::kValidate;
  if (name == "read-properties") return ReferenceCommand::kReadProperties;
  if (name == "to-catalog") return ReferenceCommand::kToCatalog;
  if (name == "project") return ReferenceCommand::kProject;
  if (name == "readiness") return ReferenceCommand::kReadiness;
  if (name == "migrate-check") return ReferenceCommand::kMigrateCheck;
  return std::nullopt;
}

std::string normalise_version_flag(std::string_view raw) {
  // /^0\.N(\.\d+)?$/ for N = 3..10, read by hand (no regular expression engine for a flag).
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (raw.substr(0, 2) != "0.") return std::string(raw);
  const std::string_view rest = raw.substr(2);
  const auto dot = rest.find('.');
  const std::string_view minor = rest.substr(0, dot);
  const bool known = minor == "10" || (minor.size() == 1 && minor[0] >= '3' && minor[0] <= '9');
  if (known && (dot == std::string_view::npos || digits(rest.substr(dot + 1)))) {
    return "0." + std::string(minor) + ".0";
  }
  return std::string(raw);
}

ReferenceAnswer run_reference(ReferenceCommand command, std::string_view app_path,
                              const ReferenceOptions& options) {
  ReferenceAnswer answer;
  if (app_path.empty()) {
    answer.exit_code = 2;
    answer.message = "Missing app path";
    return answer;
  }
  const std::string path = jsv::decode_utf8(app_path);
  try {
    switch (command) {
      case ReferenceCommand::kValidate:
        answer.value = validate(path, options);
        break;
      case ReferenceCommand::kReadProperties:
        answer.value = read_package(path).properties;
        break;
      case ReferenceCommand::kToCatalog:
        answer.value = to_catalog(read_package(path));
        break;
      case ReferenceCommand::kProject:
        answer.value = project(read_package(path));
        break;
      case ReferenceCommand::kReadiness:
        answer.value = readiness(read_package(path), options);
        break;
      case ReferenceCommand::kMigrateCheck:
        answer.value = migrate_check(path, options);
        break;
    }
  } catch (const jsv::Thrown& thrown) {
    answer.value = nullptr;
    answer.exit_code = 2;
    answer.message = thrown.what();
    return answer;
  }
  answer.text = jsv::stringify(answer.value, 2) + "\n";
  const auto* ok = jsv::get_opt(&answer.value, "ok");
  answer.exit_code = (ok != nullptr && ok->is_bool() && !ok->get_bool()) ? 1 : 0;
  return answer;
}

}  // namespace hearth::agentapp
