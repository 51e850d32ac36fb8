#include "agentapp/store/readiness.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/store/semver.hpp"
#include "agentapp/store/services.hpp"
#include "common/clock.hpp"

namespace hearth::agentapp {

namespace {

bool required(const json::value& item) {
  const auto* r = item.is_object() ? item.get_object().if_contains("required") : nullptr;
  return r != nullptr &&
         ((r->is_bool() && r->get_bool()) || (r->is_string() && r->get_string() == "true"));
}

class Assessment {
 public:
  /// A check that holds.
  void ok(std::string_view kind, std::string_view key, std::string message) {
    checks_.emplace_back(json::object{{"severity", "info"},
                                      {"kind", kind},
                                      {"key", key},
                                      {"blocking", false},
                                      {"message", std::move(message)}});
  }
  /// A check that fails: `level` blocked (nothing the person can do here), needs-setup (an
  /// action fixes it) or degraded (the app runs without it).
  void fail(std::string_view level, std::string_view kind, std::string_view key,
            const std::string& message, json::object action = {}) {
    const bool blocking = level != "degraded";
    json::object check{{"severity", blocking ? "error" : "warning"},
                       {"kind", kind},
                       {"key", key},
                       {"blocking", blocking},
                       {"tier", blocking ? "required" : "recommended"},
                       {"message", message}};
    if (!action.empty()) {
      check["remediation"] = action.at("title");
      setup_.emplace_back(std::move(action));
    }
    checks_.emplace_back(std::move(check));
    if (level == "blocked") {
      blocked_ = true;
      blockers_.emplace_back(message);
    } else if (level == "needs-setup") {
      setup_needed_ = true;
      blockers_.emplace_back(message);
    } else {
      degraded_ = true;
      warnings_.emplace_back(message);
    }
  }
  void warn(const std::string& message) { warnings_.emplace_back(message); }

  json::object result(std::string_view app) {
    const char* status = blocked_        ? "blocked"
                         : setup_needed_ ? "needs-setup"
                         : degraded_     ? "ready-degraded"
                                         : "ready";
    return json::object{{"ok", !blocked_ && !setup_needed_},
                        {"status", status},
                        {"command", "readiness"},
                        {"app", app},
                        {"workspace", nullptr},
                        {"checks", std::move(checks_)},
                        {"blockers", std::move(blockers_)},
                        {"warnings", std::move(warnings_)},
                        {"setupActions", std::move(setup_)}};
  }

 private:
  json::array checks_;
  json::array blockers_;
  json::array warnings_;
  json::array setup_;
  bool blocked_ = false;
  bool setup_needed_ = false;
  bool degraded_ = false;
};

const json::array& list_of(const json::object& fm, std::string_view key) {
  static const json::array kNone;
  const auto* v = fm.if_contains(key);
  return v != nullptr && v->is_array() ? v->get_array() : kNone;
}

}  // namespace

std::string secret_variable(std::string_view key) {
  key = key.substr(0, 127);
  std::string out;
  if (key.empty() || (key.front() >= '0' && key.front() <= '9')) out += '_';
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out;
}

namespace {

/// Why hearth's version of `name` (when it has one) does not fit `range`; nullopt when it does.
std::optional<std::string> incompatibility(const ReadinessContext& context, std::string_view name,
                                           std::string_view range) {
  const auto have = context.versions.find(name);
  if (have == context.versions.end()) return std::nullopt;
  const auto version = parse_version(have->second);
  const auto fits = version ? satisfies(*version, range) : std::nullopt;
  if (!fits) return "hearth cannot read the version range '" + std::string(range) + "'";
  if (!*fits) {
    return "hearth implements " + std::string(name) + " " + have->second + ", the app needs " +
           std::string(range);
  }
  return std::nullopt;
}

void check_lifecycle(const json::object& fm, Assessment& a) {
  // Lifecycle: past its end of life the app is blocked; deprecated only warns.
  const std::string now = utc_now();
  if (const auto eol = json::string_member(fm, "endOfLifeAt"); !eol.empty() && eol <= now) {
    std::string message = "the app reached its end of life on " + eol;
    if (const auto* window = fm.if_contains("supportWindow"); window != nullptr) {
      if (const auto by = json::string_member(*window, "supersededBy"); !by.empty()) {
        message += "; it is superseded by " + by;
      }
    }
    a.fail("blocked", "lifecycle", "endOfLifeAt", message);
  }
  if (const auto dep = json::string_member(fm, "deprecatedAt"); !dep.empty() && dep <= now) {
    a.warn("the app is deprecated since " + dep);
  }
}

void check_capabilities(const json::object& fm, const ReadinessContext& context, Assessment& a) {
  const auto provided = [&context](std::string_view capability) {
    return std::find(context.provided.begin(), context.provided.end(), capability) !=
           context.provided.end();
  };
  // Capabilities the app requires must be ones hearth provides; those only an entry or a service
  // asks for degrade the app when missing (that entry or service cannot work).
  std::vector<std::string> app_level;
  if (const auto* req = fm.if_contains("requires"); req != nullptr && req->is_object()) {
    if (const auto* caps = req->get_object().if_contains("capabilities")) {
      if (caps->is_object()) {
        for (const auto& member : caps->get_object()) app_level.emplace_back(member.key());
      } else if (caps->is_array()) {
        for (const auto& c : caps->get_array()) {
          if (c.is_string()) app_level.emplace_back(c.get_string());
        }
      }
    }
  }
  // The version ranges the app asks for (requires.capabilities as a map, requires.lime,
  // requires.sdk), against the versions hearth implements.
  std::map<std::string, std::string, std::less<>> ranges;
  if (const auto* req = fm.if_contains("requires"); req != nullptr && req->is_object()) {
    if (const auto* caps = req->get_object().if_contains("capabilities");
        caps != nullptr && caps->is_object()) {
      for (const auto& [name, range] : caps->get_object()) {
        if (range.is_string()) ranges[std::string(name)] = std::string(range.get_string());
      }
    }
  }
  if (const auto* req = fm.if_contains("requires"); req != nullptr && req->is_object()) {
    if (const auto* lime = req->get_object().if_contains("lime");
        lime != nullptr && lime->is_object()) {
      for (const auto& [name, range] : lime->get_object()) {
        if (!range.is_string()) continue;
        if (!context.versions.contains(std::string_view(name))) {
          a.fail("degraded", "compatibility", name,
                 "hearth does not know requires.lime." + std::string(name));
        } else if (auto problem = incompatibility(context, name, range.get_string())) {
          a.fail("blocked", "compatibility", name, *problem);
        } else {
          a.ok("compatibility", name,
               "hearth implements " + std::string(name) + " " +
                   context.versions.find(std::string_view(name))->second);
        }
      }
    }
    if (const auto* sdk = req->get_object().if_contains("sdk");
        sdk != nullptr && sdk->is_string()) {
      if (auto problem = incompatibility(context, "sdk", sdk->get_string())) {
        a.fail("blocked", "compatibility", "sdk", *problem);
      }
    }
  }
  for (const auto& capability : declared_capabilities(fm)) {
    const bool app_wide =
        std::find(app_level.begin(), app_level.end(), capability) != app_level.end();
    const auto range = ranges.find(capability);
    std::optional<std::string> problem;
    if (range != ranges.end() && provided(capability)) {
      problem = incompatibility(context, capability, range->second);
    }
    if (problem) {
      a.fail(app_wide ? "blocked" : "degraded", "capability", capability, *problem);
    } else if (provided(capability)) {
      a.ok("capability", capability, "hearth provides " + capability);
    } else {
      a.fail(app_wide ? "blocked" : "degraded", "capability", capability,
             "hearth does not provide " + capability +
                 (app_wide ? "" : ": what asks for it (an entry or a service) cannot work"));
    }
  }
}

void check_secrets(const AppManifest& manifest, const ReadinessContext& context, Assessment& a) {
  const auto& fm = manifest.front_matter;
  // Secrets: a required one must be in the vault.
  for (const auto& secret : list_of(fm, "secrets")) {
    const std::string key = json::string_member(secret, "key");
    if (key.empty()) continue;
    const std::string variable = secret_variable(key);
    const bool present = context.secret_present && context.secret_present(manifest.name, variable);
    if (present) {
      a.ok("secret", key, "the secret " + key + " is set");
    } else if (required(secret)) {
      a.fail("needs-setup", "secret", key, "the required secret " + key + " is not set",
             json::object{{"key", "secret:" + key},
                          {"title", "Set the secret " + key},
                          {"kind", "configure-secret"},
                          {"target", "hearth vault set app." + manifest.name + " " + variable},
                          {"description",
                           "Stored in hearth's vault; the app reads it only "
                           "through the host."}});
    } else {
      a.fail("degraded", "secret", key, "the optional secret " + key + " is not set");
    }
  }
}

void check_bindings(const json::object& fm, Assessment& a) {
  // Knowledge templates: hearth has no way to bind them yet.
  for (const auto& item : list_of(fm, "knowledgeTemplates")) {
    const std::string key = json::string_member(item, "key");
    a.fail(required(item) ? "blocked" : "degraded", "knowledge", key.empty() ? "knowledge" : key,
           "hearth cannot bind knowledge for apps yet (" + (key.empty() ? "knowledge" : key) + ")");
  }
  // Tools: LAVS endpoints, registry capabilities and workspace scripts are bound when a task
  // starts, to what the daemon serves then; other providers cannot be bound.
  for (const auto& item : list_of(fm, "toolRefs")) {
    const std::string key = json::string_member(item, "key");
    const std::string provider = json::string_member(item, "provider");
    std::string target = json::string_member(item, "capability");
    if (target.empty()) target = key;
    if (provider == "lavs" || provider == "registry" || provider == "a2s" ||
        provider == "workspace") {
      std::string message = "bound to the " + provider;
      message += " tool " + target;
      message += " when a task starts, if the daemon serves it";
      a.ok("tool", key, message);
    } else {
      std::string message = "hearth binds lavs, registry and workspace tools, not '" + provider;
      message += "' (" + key + ")";
      a.fail(required(item) ? "blocked" : "degraded", "tool", key.empty() ? "tool" : key, message);
    }
  }
}

void check_backends(const json::object& fm, const std::filesystem::path& package,
                    const ReadinessContext& context, Assessment& a) {
  // Backends: those hearth runs (client-local, stdio-jsonrpc, under the jail, supervised) and
  // those it does not, with the reason.
  if (context.runs_backends) {
    const auto plan = plan_backends(fm, package);
    for (const auto& b : plan.run) {
      a.ok("backend", b.key, "hearth runs the backend " + b.key + " under the jail");
    }
    for (const auto& b : plan.not_run) {
      a.fail(b.required ? "blocked" : "degraded", "backend", b.key,
             "the backend " + b.key + " will not start: " + b.reason);
    }
    const auto js = plan_js_units(fm, package);
    for (const auto& u : js.run) {
      a.ok("worker", u.key, "hearth runs the " + u.kind + " " + u.key + " in its JS workers");
    }
    for (const auto& u : js.not_run) {
      a.fail(u.required ? "blocked" : "degraded", "worker", u.key,
             u.key + " will not run: " + u.reason);
    }
  } else {
    for (const auto& service : list_of(fm, "services")) {
      if (json::string_member(service, "kind") != "app-backend") continue;
      const std::string key = json::string_member(service, "key");
      a.fail(required(service) ? "blocked" : "degraded", "backend", key,
             "this host does not run app backends: " + key + " will not start");
    }
  }
}

void check_migrations(const json::object& fm, const std::filesystem::path& package, Assessment& a) {
  // Migrations: a folder inside the package that can be read; they run when the app is
  // enabled, each in one transaction.
  auto migrations = migration_files(package, fm);
  if (!migrations.ok()) {
    a.fail("blocked", "migration", "storage.migrations", migrations.error().message);
  } else if (!migrations.value().empty()) {
    a.ok("migration", "storage.migrations",
         std::to_string(migrations.value().size()) +
             " migration(s) run when the app is enabled, each in one transaction");
  }
}

}  // namespace

json::object assess_readiness(const AppManifest& manifest, const std::filesystem::path& package,
                              const ReadinessContext& context) {
  const auto& fm = manifest.front_matter;
  Assessment a;
  check_lifecycle(fm, a);
  check_capabilities(fm, context, a);
  check_secrets(manifest, context, a);
  check_bindings(fm, a);
  check_backends(fm, package, context, a);
  check_migrations(fm, package, a);
  return a.result(manifest.name);
}

void add_backend_failures(json::object& readiness, const json::array& reports) {
  if (reports.empty()) return;
  auto& checks = readiness["checks"].as_array();
  for (const auto& item : reports) {
    if (!item.is_object()) continue;
    const auto& report = item.get_object();
    const std::string key = json::string_member(report, "service");
    const auto* req = report.if_contains("required");
    const bool required = req != nullptr && req->is_bool() && req->get_bool();
    std::string message =
        "the backend " + key + " is failing: " + json::string_member(report, "reason");
    if (const auto* n = report.if_contains("failures"); n != nullptr && n->is_int64()) {
      message += " (" + std::to_string(n->get_int64()) + " failed start(s) in a row)";
    }
    json::object check{{"severity", required ? "error" : "warning"},
                       {"kind", "backend"},
                       {"key", key},
                       {"blocking", required},
                       {"tier", required ? "required" : "recommended"},
                       {"state", "failing"},
                       {"message", message}};
    if (const auto tail = json::string_member(report, "stderrTail"); !tail.empty()) {
      check["stderrTail"] = tail;
    }
    // In place of the check that said hearth runs it.
    json::array kept;
    for (auto& c : checks) {
      if (json::string_member(c, "kind") == "backend" && json::string_member(c, "key") == key) {
        continue;
      }
      kept.emplace_back(std::move(c));
    }
    kept.emplace_back(std::move(check));
    checks = std::move(kept);
    const std::string status(readiness.at("status").as_string());
    if (required) {
      readiness["blockers"].as_array().emplace_back(message);
      readiness["status"] = "blocked";
      readiness["ok"] = false;
    } else {
      readiness["warnings"].as_array().emplace_back(message);
      if (status == "ready") readiness["status"] = "ready-degraded";
    }
  }
}

}  // namespace hearth::agentapp
