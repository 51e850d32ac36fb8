// `hearth app`: Agent App packages (docs/agent-apps.md). The six reading commands answer as the
// format's reference CLI does (with --json, byte for byte; without it, a summary for people).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/bridge/bridge.hpp"
#include "agentapp/package/jsv.hpp"
#include "agentapp/package/reference.hpp"
#include "agentapp/records/records.hpp"
#include "agentapp/store/store.hpp"
#include "cli/common.hpp"
#include "common/atomic_file.hpp"
#include "storage/engine.hpp"
#include "subsystems/storage.hpp"
#include "vault/vault.hpp"

namespace hearth::cli {

namespace {

struct AppArgs {
  std::string dir;
  bool json = false;
  std::string version;
  std::string target;
  std::string workspace;
  bool has_version = false;
  bool has_target = false;
  bool has_workspace = false;
};

std::string text_of(const json::value* v) {
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

/// The summary printed without --json: status, then one line per finding, check or gap.
void print_summary(agentapp::ReferenceCommand command, const json::object& out) {
  const auto* app = out.if_contains("app");
  const auto* status = out.if_contains("status");
  std::cout << text_of(app) << ": " << text_of(status);
  if (command == agentapp::ReferenceCommand::kMigrateCheck) {
    std::cout << " (" << text_of(out.if_contains("sourceVersion")) << " -> "
              << text_of(out.if_contains("targetVersion")) << ")";
  }
  std::cout << "\n";
  const auto list = [&out](std::string_view key) -> const json::array* {
    const auto* v = out.if_contains(key);
    return v != nullptr && v->is_array() ? &v->get_array() : nullptr;
  };
  if (const auto* findings = list("findings")) {
    for (const auto& f : *findings) {
      const auto& o = f.get_object();
      std::cout << "  " << text_of(o.if_contains("severity")) << " "
                << text_of(o.if_contains("path")) << ": " << text_of(o.if_contains("message"))
                << "\n";
    }
  }
  if (const auto* checks = list("checks")) {
    for (const auto& c : *checks) {
      const auto& o = c.get_object();
      std::cout << "  " << text_of(o.if_contains("severity")) << " "
                << text_of(o.if_contains("kind")) << " " << text_of(o.if_contains("key")) << ": "
                << text_of(o.if_contains("message")) << "\n";
    }
  }
  if (const auto* gaps = list("gaps")) {
    for (const auto& g : *gaps) {
      const auto& o = g.get_object();
      std::cout << "  gap " << text_of(o.if_contains("field")) << ": "
                << text_of(o.if_contains("suggestion")) << "\n";
    }
  }
  if (const auto* hash = out.if_contains("manifestHash")) {
    std::cout << "manifestHash " << text_of(hash) << "\n";
  }
}

int run_reference(agentapp::ReferenceCommand command, const AppArgs& args) {
  agentapp::ReferenceOptions options;
  if (args.has_version) options.version = args.version;
  if (args.has_target) options.target = args.target;
  if (args.has_workspace) options.workspace = args.workspace;
  const auto answer = agentapp::run_reference(command, args.dir, options);
  if (answer.exit_code == 2) {
    std::cerr << answer.message << "\n";
    return 2;
  }
  const bool summary = !args.json && answer.value.is_object() &&
                       (command == agentapp::ReferenceCommand::kValidate ||
                        command == agentapp::ReferenceCommand::kReadiness ||
                        command == agentapp::ReferenceCommand::kMigrateCheck);
  if (summary) {
    print_summary(command, answer.value.get_object());
  } else {
    std::cout << answer.text;
  }
  std::cout.flush();
  return answer.exit_code;
}

struct ManageArgs {
  std::filesystem::path state_dir;
  std::string target;  // a package folder or archive, an app name, a key file
  bool dev = false;
  bool approve = false;
  bool json = false;
  bool strict = false;
  bool keep_data = false;
  bool delete_data = false;
  std::string export_to;
  std::string key;
  std::string publisher;
  std::string what;  // revoke: "key" or "package"
  std::string capability;
  std::string workspace;
};

}  // namespace

namespace {

int app_failed(const Error& error) {
  std::cerr << "hearth app: " << error.message << "\n";
  return 1;
}

Result<std::unique_ptr<agentapp::AppStore>> open_store(const ManageArgs& args) {
  const auto state_dir = args.state_dir.empty() ? default_state_dir() : args.state_dir;
  // The state dir's own SQLite files, or the PostgreSQL database $HEARTH_DATABASE names (as
  // `hearth serve --database` does): an app installed there is every daemon's.
  const char* database = std::getenv("HEARTH_DATABASE");
  HEARTH_ASSIGN_OR_RETURN(auto engine,
                          subsystems::open_storage(database != nullptr ? database : "", state_dir));
  HEARTH_ASSIGN_OR_RETURN(auto store, agentapp::AppStore::open(state_dir, engine));
  store->set_readiness_context(app_readiness(state_dir, engine));
  return store;
}

std::string join_strings(const json::value& list, std::string_view sep = ", ") {
  std::string out;
  if (!list.is_array()) return out;
  for (const auto& item : list.get_array()) {
    if (!out.empty()) out += sep;
    out += item.is_string() ? std::string(item.get_string()) : json::serialize(item);
  }
  return out;
}

std::string field(const json::value& o, std::string_view key) {
  const auto* v = o.is_object() ? o.get_object().if_contains(key) : nullptr;
  if (v == nullptr) return "";
  return v->is_string() ? std::string(v->get_string()) : json::serialize(*v);
}

/// The review, for a person deciding whether to enable the app.
void print_review(const json::object& review) {
  const auto row = [](std::string_view label, const std::string& text) {
    if (!text.empty()) {
      std::cout << "  " << label << std::string(14 - label.size(), ' ') << text << "\n";
    }
  };
  for (const auto& e : review.at("entries").as_array()) {
    row("entry", field(e, "kind") + " " + field(e, "key") + " \"" + field(e, "title") + "\" " +
                     field(e, "route"));
  }
  row("capabilities", join_strings(review.at("capabilities")));
  for (const auto& p : review.at("permissions").as_array()) {
    std::string text = field(p, "key") + ": " + field(p, "scope") + " " + field(p, "access");
    const auto* domains = p.is_object() ? p.get_object().if_contains("domains") : nullptr;
    if (const auto d = domains != nullptr ? join_strings(*domains) : std::string(); !d.empty()) {
      text += " (" + d + ")";
    }
    row("permission", text);
  }
  row("network", join_strings(review.at("networkHosts")));
  if (review.at("storage").is_object()) {
    const auto& st = review.at("storage");
    row("storage", field(st, "namespace") + " (" + field(st, "placement") + ", " +
                       field(st, "isolation") + ")");
  }
  for (const auto& b : review.at("backends").as_array()) {
    std::string run = field(b, "command");
    if (run.empty()) run = field(b, "binary");
    if (run.empty()) run = field(b, "path");
    if (run.empty()) run = field(b, "endpoint");
    if (const auto* a = b.is_object() ? b.get_object().if_contains("args") : nullptr;
        a != nullptr && a->is_array()) {
      for (const auto& arg : a->get_array()) {
        run += " " + (arg.is_string() ? std::string(arg.get_string()) : json::serialize(arg));
      }
    }
    row("backend", field(b, "key") + ": " + field(b, "protocol") + " " + run + " (network " +
                       (field(b, "network").empty() ? "not declared" : field(b, "network")) + ")");
  }
  for (const auto& sv : review.at("services").as_array()) {
    row("service", field(sv, "key") + ": " + field(sv, "kind"));
  }
  if (const auto* tools = review.if_contains("tools"); tools != nullptr && tools->is_array()) {
    for (const auto& t : tools->as_array()) {
      row("tool", field(t, "key") + ": " + field(t, "provider") + " " + field(t, "capability"));
    }
  }
  if (const auto* ops = review.if_contains("operations"); ops != nullptr && ops->is_array()) {
    for (const auto& op : ops->as_array()) {
      std::string text = field(op, "key") + ": " + field(op, "sideEffect");
      for (const char* flag : {"approvalRequired", "autoExecute", "dryRunRequired"}) {
        if (field(op, flag) == "true") text += std::string(", ") + flag;
      }
      row("operation", text);
    }
  }
  for (const auto& sc : review.at("secrets").as_array()) {
    row("secret", field(sc, "key") + (field(sc, "required") == "true" ? " (required)" : ""));
  }
  for (const auto& w : review.at("warnings").as_array()) row("WARNING", std::string(w.as_string()));
}

/// A readiness assessment: its status, then what degrades or blocks it and what to do.
void print_readiness(const json::value& ready) {
  std::cout << "  readiness     " << ready.at("status").as_string().c_str() << "\n";
  for (const auto& w : ready.at("warnings").as_array()) {
    std::cout << "    - " << w.as_string().c_str() << "\n";
  }
  for (const auto& b : ready.at("blockers").as_array()) {
    std::cout << "    ! " << b.as_string().c_str() << "\n";
  }
  for (const auto& s : ready.at("setupActions").as_array()) {
    std::cout << "    to do: " << s.at("title").as_string().c_str() << ": "
              << s.at("target").as_string().c_str() << "\n";
  }
}

/// `hearth app show NAME`: the installed app in a screenful (everything with --json).
void print_shown(const json::object& shown) {
  const auto text = [&shown](std::string_view key) {
    const auto* v = shown.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  const bool enabled =
      shown.contains("enabled") && shown.at("enabled").is_bool() && shown.at("enabled").get_bool();
  const auto& review = shown.at("review").as_object();
  std::cout << text("name") << " " << text("version");
  if (const auto* d = review.if_contains("displayName"); d != nullptr && d->is_string()) {
    std::cout << " (" << d->get_string().c_str() << ")";
  }
  std::cout << ", " << (enabled ? "enabled" : "disabled (hearth app enable " + text("name") + ")")
            << "\n  trust         "
            << (text("trust") == "signed"
                    ? "signed by " + text("publisher")
                    : "NOT VERIFIED (" + text("trust") + ", development mode)")
            << "\n  installed     " << text("installedAt") << " in " << text("dir")
            << "\n  data          " << text("dataDir") << "\n  package       "
            << text("packageHash") << "\n";
  print_review(review);
  if (const auto* ready = shown.if_contains("readiness"); ready != nullptr && ready->is_object()) {
    print_readiness(*ready);
  }
  if (const auto* integrity = shown.if_contains("integrity"); integrity != nullptr) {
    const auto& problems = integrity->at("problems").as_array();
    std::cout << "  integrity     "
              << (problems.empty() ? std::string("the installed files match the package")
                                   : std::to_string(problems.size()) + " problem(s)")
              << "\n";
    for (const auto& p : problems) {
      std::cout << "    ! " << (p.is_string() ? std::string(p.get_string()) : json::serialize(p))
                << "\n";
    }
  }
  for (const auto& b : shown.at("backends").as_array()) {
    std::cout << "  running       " << json::string_member(b, "service") << ": "
              << json::string_member(b, "state") << "\n";
  }
  for (const auto& g : shown.at("grants").as_array()) {
    std::string where = json::string_member(g, "workspace");
    std::cout << "  grant         " << json::string_member(g, "decision") << " "
              << json::string_member(g, "capability") << (where.empty() ? "" : " in " + where)
              << "\n";
  }
  const auto& log = shown.at("log").as_array();
  const std::size_t from = log.size() > 5 ? log.size() - 5 : 0;
  for (std::size_t i = from; i < log.size(); ++i) {
    std::cout << "  log           " << json::string_member(log[i], "at") << " "
              << json::string_member(log[i], "action") << "\n";
  }
  if (from > 0) std::cout << "                (" << from << " earlier entries: --json)\n";
  std::cout << "The whole record, review, readiness checks and projection: hearth app show "
            << text("name") << " --json\n";
}

int manage(std::string_view command, const ManageArgs& args) {
  namespace aa = agentapp;
  if (command == "keygen") {
    auto generated = aa::generate_key();
    if (!generated.ok()) return app_failed(generated.error());
    const auto& pair = generated.value();
    if (auto w = write_file_atomic(args.target, pair.private_pem, {.mode = 0600}); !w.ok()) {
      return app_failed(w.error());
    }
    if (auto w = write_file_atomic(args.target + ".pub", pair.public_pem, {.mode = 0644});
        !w.ok()) {
      return app_failed(w.error());
    }
    std::cout << "key " << pair.fingerprint << ": private " << args.target << ", public "
              << args.target << ".pub\n";
    return 0;
  }
  if (command == "sign") {
    std::ifstream in(args.key, std::ios::binary);
    if (!in) return app_failed(Error::make(ErrorCode::kInvalidParams, "cannot read " + args.key));
    const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto fp = aa::sign_package(args.target, pem, args.publisher);
    if (!fp.ok()) return app_failed(fp.error());
    std::cout << "signed " << args.target << " for " << args.publisher << " with key " << fp.value()
              << "\n";
    return 0;
  }
  auto opened = open_store(args);
  if (!opened.ok()) return app_failed(opened.error());
  auto& store = *opened.value();
  if (command == "trust") {
    std::ifstream in(args.key, std::ios::binary);
    if (!in) return app_failed(Error::make(ErrorCode::kInvalidParams, "cannot read " + args.key));
    const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto fp = store.trust().add_key(args.target, pem);
    if (!fp.ok()) return app_failed(fp.error());
    std::cout << "trusting key " << fp.value() << " of publisher " << args.target << "\n";
    return 0;
  }
  if (command == "revoke") {
    if (auto r = store.trust().revoke(args.what, args.target); !r.ok()) {
      return app_failed(r.error());
    }
    std::cout << "revoked " << args.what << " " << args.target << "\n";
    return 0;
  }
  if (command == "install") {
    auto result = store.install(args.target, args.dev, args.strict);
    if (!result.ok()) return app_failed(result.error());
    const auto& app = result.value().app;
    if (args.json) {
      json::object out = app.to_json();
      out["review"] = result.value().review;
      std::cout << aa::jsv::stringify(out, 2) << "\n";
      return 0;
    }
    std::cout << "installed " << app.name << " " << app.version << ", disabled; "
              << (app.trust == "signed" ? "signed by " + app.publisher + " (key " + app.key + ")"
                                        : "NOT VERIFIED (" + app.trust + ", development mode)")
              << "\n  package       " << app.package_hash << "\n";
    print_review(result.value().review);
    print_readiness(result.value().review.at("readiness"));
    std::cout << "Nothing of it runs until you enable it: hearth app enable " << app.name << "\n";
    return 0;
  }
  if (command == "upgrade") {
    auto result = store.upgrade(args.target, args.dev, args.approve);
    if (!result.ok()) return app_failed(result.error());
    const auto& r = result.value();
    if (args.json) {
      json::object out = r.app.to_json();
      out["upgraded"] = r.upgraded;
      out["needsApproval"] = r.needs_approval;
      out["added"] = r.added;
      out["migrationsApplied"] = r.migrations_applied;
      std::cout << aa::jsv::stringify(out, 2) << "\n";
    } else {
      for (const auto& [what, list] : r.added) {
        for (const auto& item : list.as_array()) {
          std::cout << "  new " << what << ": "
                    << (item.is_string() ? std::string(item.get_string()) : json::serialize(item))
                    << "\n";
        }
      }
      if (r.upgraded) {
        std::cout << "upgraded " << r.app.name << " to " << r.app.version
                  << " (hearth app rollback " << r.app.name << " returns to the version before)\n";
      } else {
        std::cout << r.app.name << " stays at " << r.app.version
                  << ": the new version adds what is listed above; run again with --approve\n";
      }
    }
    return r.upgraded ? 0 : 3;
  }
  if (command == "rollback") {
    auto back = store.rollback(args.target);
    if (!back.ok()) return app_failed(back.error());
    std::cout << back.value().name << " is back at " << back.value().version
              << " (its data keeps the migrations applied since)\n";
    return 0;
  }
  if (command == "list") {
    auto apps = store.list();
    if (!apps.ok()) return app_failed(apps.error());
    if (args.json) {
      json::array out;
      for (const auto& a : apps.value()) out.emplace_back(a.to_json());
      std::cout << aa::jsv::stringify(out, 2) << "\n";
      return 0;
    }
    for (const auto& a : apps.value()) {
      std::cout << a.name << " " << a.version << " " << (a.enabled ? "enabled" : "disabled") << " "
                << (a.dev() ? "dev (" + a.trust + ")" : "signed by " + a.publisher) << "\n";
    }
    return 0;
  }
  if (command == "show") {
    auto shown = store.show(args.target);
    if (!shown.ok()) return app_failed(shown.error());
    if (args.json) {
      std::cout << aa::jsv::stringify(shown.value(), 2) << "\n";
    } else {
      print_shown(shown.value());
    }
    return 0;
  }
  if (command == "grant" || command == "deny") {
    if (auto r =
            store.grant(args.target, args.capability, args.workspace, command == "grant", "person");
        !r.ok()) {
      return app_failed(r.error());
    }
    std::cout << (command == "grant" ? "granted " : "denied ") << args.capability << " to "
              << args.target << " for "
              << (args.workspace.empty() ? std::string("every workspace")
                                         : "workspace " + args.workspace)
              << "\n";
    return 0;
  }
  if (command == "evidence" || command == "artifacts") {
    // What the app left behind, read through the same store the bridge writes; nothing runs.
    auto app = store.find(args.target);
    if (!app.ok()) return app_failed(app.error());
    auto data = store.open_data(app.value());
    if (!data.ok()) return app_failed(data.error());
    const aa::Provenance provenance{app.value().name, app.value().version, app.value().package_hash,
                                    app.value().manifest_hash};
    aa::EvidenceLog evidence(data.value()->database(), provenance);
    json::object out{{"app", args.target}};
    if (command == "evidence") {
      auto entries = evidence.entries();
      if (!entries.ok()) return app_failed(entries.error());
      const auto verified = evidence.verify();
      out["verified"] = verified.ok();
      if (!verified.ok()) out["problem"] = verified.error().message;
      out["entries"] = std::move(entries.value());
      std::cout << aa::jsv::stringify(out, 2) << "\n";
      return verified.ok() ? 0 : 1;
    }
    aa::ArtifactStore artifacts(data.value()->database(), store.data_dir(args.target) / "artifacts",
                                provenance, evidence);
    auto list = artifacts.list();
    if (!list.ok()) return app_failed(list.error());
    out["artifacts"] = std::move(list.value());
    std::cout << aa::jsv::stringify(out, 2) << "\n";
    return 0;
  }
  if (command == "grants") {
    auto grants = store.grants(args.target);
    if (!grants.ok()) return app_failed(grants.error());
    std::cout << aa::jsv::stringify(grants.value(), 2) << "\n";
    return 0;
  }
  if (command == "enable" || command == "disable") {
    if (auto r = store.set_enabled(args.target, command == "enable"); !r.ok()) {
      return app_failed(r.error());
    }
    std::cout << args.target << " " << command << "d\n";
    return 0;
  }
  if (command == "uninstall") {
    const int chosen =
        (args.keep_data ? 1 : 0) + (args.delete_data ? 1 : 0) + (args.export_to.empty() ? 0 : 1);
    if (chosen != 1) {
      std::cerr << "hearth app uninstall: choose one of --keep-data, --delete-data, "
                   "--export-then-delete FILE\n";
      return 2;
    }
    const auto policy = args.keep_data     ? aa::DataPolicy::kKeep
                        : args.delete_data ? aa::DataPolicy::kDelete
                                           : aa::DataPolicy::kExportThenDelete;
    auto record = store.uninstall(args.target, policy, args.export_to);
    if (!record.ok()) return app_failed(record.error());
    std::cout << aa::jsv::stringify(record.value(), 2) << "\n";
    return 0;
  }
  return 2;
}

}  // namespace

CLI::App* add_app_command(CLI::App& app, std::function<int()>& run) {
  auto* apps = app.add_subcommand(
      "app", "Agent App packages: read, validate and project them (docs/agent-apps.md)");
  apps->require_subcommand(1);
  static AppArgs args;
  struct Reading {
    const char* name;
    const char* help;
    agentapp::ReferenceCommand command;
  };
  static const Reading kReadings[] = {
      {"validate", "Check APP.md and the layered files; findings as the reference CLI gives them",
       agentapp::ReferenceCommand::kValidate},
      {"read-properties", "Print APP.md's front matter as JSON",
       agentapp::ReferenceCommand::kReadProperties},
      {"to-catalog", "Print the catalog fields of the package",
       agentapp::ReferenceCommand::kToCatalog},
      {"project", "Print the host projection with provenance (package and manifest hashes)",
       agentapp::ReferenceCommand::kProject},
      {"readiness", "Static readiness checks (nothing runs)",
       agentapp::ReferenceCommand::kReadiness},
      {"migrate-check", "What the package lacks for a newer manifest version",
       agentapp::ReferenceCommand::kMigrateCheck},
  };
  for (const auto& reading : kReadings) {
    auto* cmd = apps->add_subcommand(reading.name, reading.help);
    cmd->add_option("dir", args.dir, "The package folder (holding APP.md)");
    cmd->add_flag("--json", args.json, "Print the JSON the format's reference CLI prints");
    if (reading.command == agentapp::ReferenceCommand::kValidate ||
        reading.command == agentapp::ReferenceCommand::kMigrateCheck) {
      cmd->add_option("--version", args.version,
                      "Manifest version to check against (0.N or 0.N.x means 0.N.0)");
      cmd->add_option("--target", args.target, "Same as --version");
    }
    if (reading.command == agentapp::ReferenceCommand::kReadiness) {
      cmd->add_option("--workspace", args.workspace, "A workspace folder that must exist");
    }
    cmd->footer(
        "Exit status: 0, 1 when the printed object has \"ok\": false, 2 when the package "
        "cannot be read (message on stderr).");
    const auto command = reading.command;
    cmd->callback([&run, cmd, command] {
      const auto given = [cmd](const char* name) {
        return cmd->get_option_no_throw(name) != nullptr && cmd->count(name) > 0;
      };
      args.has_version = given("--version");
      args.has_target = given("--target");
      args.has_workspace = given("--workspace");
      run = [command] { return run_reference(command, args); };
    });
  }
  static ManageArgs manage_args;
  const auto add = [&](const char* name, const char* help, const char* target_help) {
    auto* cmd = apps->add_subcommand(name, help);
    if (target_help != nullptr) {
      cmd->add_option("target", manage_args.target, target_help)->required();
    }
    cmd->add_option("--state-dir", manage_args.state_dir, "The state dir (its apps/ folder)");
    const std::string command = name;
    cmd->callback([&run, command] { run = [command] { return manage(command, manage_args); }; });
    return cmd;
  };
  auto* install = add("install",
                      "Install a package folder or .tar.gz, verified, disabled, with a review of "
                      "what it adds",
                      "DIR or FILE.tar.gz");
  install->add_flag("--dev", manage_args.dev,
                    "Accept an unsigned or placeholder-signed package, unverified");
  install->add_flag("--json", manage_args.json, "Print the app and its review as JSON");
  install->add_flag("--strict", manage_args.strict,
                    "Refuse a package whose APP.md has front-matter keys the format does not "
                    "define (a misspelt key: otherwise a warning)");
  auto* upgrade = add("upgrade",
                      "Upgrade an installed app to a package's version; what it adds waits for "
                      "--approve",
                      "DIR or FILE.tar.gz");
  upgrade->add_flag("--dev", manage_args.dev, "Accept an unsigned package, unverified");
  upgrade->add_flag("--approve", manage_args.approve,
                    "Approve what the new version adds (capabilities, permissions, hosts, "
                    "migrations, backends)");
  upgrade->add_flag("--json", manage_args.json, "Print JSON");
  upgrade->footer("Exit status: 0 upgraded, 3 waiting for --approve, 1 refused.");
  add("rollback", "Return to the version installed before the last upgrade", "NAME");
  add("list", "The installed apps", nullptr)->add_flag("--json", manage_args.json, "Print JSON");
  add("show", "An installed app: a readable summary of its record, review, readiness and log",
      "NAME")
      ->add_flag("--json", manage_args.json,
                 "Print everything as JSON: record, review, readiness checks, projection, log");
  add("enable", "Enable an installed app", "NAME");
  add("disable", "Disable an app (its data stays)", "NAME");
  auto* uninstall = add("uninstall", "Remove an app; its data kept, deleted or exported", "NAME");
  uninstall->add_flag("--keep-data", manage_args.keep_data, "Keep the app's data");
  uninstall->add_flag("--delete-data", manage_args.delete_data, "Delete the app's data");
  uninstall->add_option("--export-then-delete", manage_args.export_to,
                        "Write the data to this .tar.gz, then delete it");
  for (const char* verb : {"grant", "deny"}) {
    auto* cmd =
        add(verb,
            std::string(verb) == "grant" ? "Allow an app a capability (deny rules still win)"
                                         : "Deny an app a capability (wins over every allow)",
            "NAME");
    cmd->add_option("capability", manage_args.capability, "The capability (lime.storage, ...)")
        ->required();
    cmd->add_option("--workspace", manage_args.workspace, "Only for this workspace");
  }
  add("grants", "An app's grants (JSON)", "NAME");
  add("evidence", "An app's evidence log and whether its chain verifies (JSON; exit 1 when not)",
      "NAME");
  add("artifacts", "An app's artifacts (JSON)", "NAME");
  add("keygen", "Make an Ed25519 key pair for signing packages (FILE and FILE.pub)", "FILE");
  auto* sign = add("sign", "Sign a package folder (writes its app.signature.yaml)", "DIR");
  sign->add_option("--key", manage_args.key, "The private key (PEM)")->required();
  sign->add_option("--publisher", manage_args.publisher, "The publisher id")->required();
  auto* trust = add("trust", "Trust a publisher's public key for installs", "PUBLISHER");
  trust->add_option("--key", manage_args.key, "The public key (PEM)")->required();
  auto* revoke = add("revoke", "Put a key fingerprint or a package hash on the revocation list",
                     "FINGERPRINT or sha256:HASH");
  revoke->add_option("--kind", manage_args.what, "key or package")->required();
  return apps;
}

}  // namespace hearth::cli
