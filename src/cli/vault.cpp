// `hearth vault ...`: the A2S variable vault of a state dir, without a daemon.
#include "vault/vault.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <iterator>

#include "cli/common.hpp"
#include "subsystems/storage.hpp"

namespace hearth::cli {

namespace fs = std::filesystem;

namespace {

struct VaultArgs {
  fs::path state_dir;
  std::vector<std::string> words;  ///< SCOPE NAME [VALUE], or SCOPE::NAME [VALUE]
  std::int64_t expires_in = 0;
  bool json = false;
};

/// SCOPE and NAME from `SCOPE NAME ...` or `SCOPE::NAME ...`; the rest stays in `rest`.
bool scope_and_name(const std::vector<std::string>& words, std::string& scope, std::string& name,
                    std::vector<std::string>& rest) {
  if (words.empty()) return false;
  const auto at = words[0].rfind("::");
  if (at != std::string::npos && at > 0 && at + 2 < words[0].size()) {
    scope = words[0].substr(0, at);
    name = words[0].substr(at + 2);
    rest.assign(words.begin() + 1, words.end());
    return true;
  }
  if (words.size() < 2) return false;
  scope = words[0];
  name = words[1];
  rest.assign(words.begin() + 2, words.end());
  return true;
}

Result<std::shared_ptr<vault::Vault>> opened(const VaultArgs& args) {
  const auto state_dir = args.state_dir.empty() ? default_state_dir() : args.state_dir;
  // The state dir's vault.db, or the PostgreSQL database $HEARTH_DATABASE names (the vault
  // every daemon of it shares).
  const char* database = std::getenv("HEARTH_DATABASE");
  HEARTH_ASSIGN_OR_RETURN(auto engine,
                          subsystems::open_storage(database != nullptr ? database : "", state_dir));
  return open_vault(state_dir, std::move(engine));
}

int vault_failed(const Error& error) {
  std::cerr << "hearth vault: " << error.message << std::endl;
  return error.code == ErrorCode::kInvalidParams ? 2 : 1;
}

int usage(const std::string& message) {
  std::cerr << "hearth vault: " << message << std::endl;
  return 2;
}

int set(const VaultArgs& args) {
  std::string scope;
  std::string name;
  std::vector<std::string> rest;
  if (!scope_and_name(args.words, scope, name, rest) || rest.size() > 1) {
    return usage("usage: hearth vault set SCOPE NAME [VALUE] (or SCOPE::NAME)");
  }
  std::string value;
  if (!rest.empty()) {
    value = rest[0];
  } else {
    // From stdin, so the value stays out of the shell's history; one trailing newline (of an
    // echo or a terminal line) is not part of it.
    if (::isatty(STDIN_FILENO) != 0) std::cerr << "value for " << scope << "::" << name << ": ";
    value.assign(std::istreambuf_iterator<char>(std::cin), {});
    if (!value.empty() && value.back() == '\n') value.pop_back();
    if (!value.empty() && value.back() == '\r') value.pop_back();
  }
  auto vault = opened(args);
  if (!vault.ok()) return vault_failed(vault.error());
  std::optional<std::int64_t> expires;
  if (args.expires_in > 0) {
    expires = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count() +
              args.expires_in;
  }
  auto stored = vault.value()->set(scope, name, value, expires);
  if (!stored.ok()) return vault_failed(stored.error());
  std::cerr << "stored " << scope << "::" << name << std::endl;
  return 0;
}

int get(const VaultArgs& args) {
  std::string scope;
  std::string name;
  std::vector<std::string> rest;
  if (!scope_and_name(args.words, scope, name, rest) || !rest.empty()) {
    return usage("usage: hearth vault get SCOPE NAME (or SCOPE::NAME)");
  }
  auto vault = opened(args);
  if (!vault.ok()) return vault_failed(vault.error());
  auto secret = vault.value()->get(scope, name);
  if (!secret.ok()) return vault_failed(secret.error());
  if (!secret.value()) {
    std::cerr << "hearth vault: no " << scope << "::" << name << " (or it expired)" << std::endl;
    return 1;
  }
  std::cout << secret.value()->value << std::endl;
  return 0;
}

int list(const VaultArgs& args) {
  if (args.words.size() > 1) return usage("usage: hearth vault list [SCOPE] [--json]");
  auto vault = opened(args);
  if (!vault.ok()) return vault_failed(vault.error());
  std::optional<std::string_view> scope;
  if (!args.words.empty()) scope = args.words[0];
  auto entries = vault.value()->list(scope);
  if (!entries.ok()) return vault_failed(entries.error());
  auto grants = vault.value()->grants(std::nullopt);
  if (!grants.ok()) return vault_failed(grants.error());
  if (args.json) {
    json::array e;
    for (const auto& entry : entries.value()) {
      json::object o{{"scope", entry.scope},
                     {"name", entry.name},
                     {"variable", entry.scope + "::" + entry.name},
                     {"updatedAt", entry.updated_at},
                     {"size", entry.size}};
      if (entry.expires_at) o["expiresAt"] = *entry.expires_at;
      e.push_back(std::move(o));
    }
    json::array g;
    for (const auto& grant : grants.value()) {
      g.push_back(json::object{
          {"domain", grant.domain}, {"name", grant.name}, {"grantedAt", grant.granted_at}});
    }
    std::cout << json::dump(json::object{{"entries", e}, {"grants", g}}) << std::endl;
    return 0;
  }
  for (const auto& entry : entries.value()) {
    std::cout << entry.scope << "::" << entry.name << "  (" << entry.size << " bytes"
              << (entry.expires_at ? ", expires " + std::to_string(*entry.expires_at) : "")
              << ")\n";
  }
  for (const auto& grant : grants.value()) {
    std::cout << "trust " << grant.domain << " "
              << (grant.name == "*" ? std::string("(every global variable)")
                                    : "global::" + grant.name)
              << "\n";
  }
  return 0;
}

int remove(const VaultArgs& args) {
  std::string scope;
  std::string name;
  std::vector<std::string> rest;
  if (!scope_and_name(args.words, scope, name, rest) || !rest.empty()) {
    return usage("usage: hearth vault delete SCOPE NAME (or SCOPE::NAME)");
  }
  auto vault = opened(args);
  if (!vault.ok()) return vault_failed(vault.error());
  auto removed = vault.value()->remove(scope, name);
  if (!removed.ok()) return vault_failed(removed.error());
  if (!removed.value()) {
    std::cerr << "hearth vault: no " << scope << "::" << name << std::endl;
    return 1;
  }
  return 0;
}

int trust(const VaultArgs& args, bool grant) {
  if (args.words.empty()) {
    return usage(std::string("usage: hearth vault ") + (grant ? "trust" : "revoke") +
                 " DOMAIN [NAME...]");
  }
  auto vault = opened(args);
  if (!vault.ok()) return vault_failed(vault.error());
  const std::vector<std::string> names(args.words.begin() + 1, args.words.end());
  if (grant) {
    auto done = vault.value()->trust(args.words[0], names);
    if (!done.ok()) return vault_failed(done.error());
    std::cerr << args.words[0] << " may now read "
              << (names.empty() ? std::string("every global variable")
                                : "global::" +
                                      [&] {
                                        std::string joined;
                                        for (const auto& n : names) {
                                          joined += (joined.empty() ? "" : ", global::") + n;
                                        }
                                        return joined;
                                      }())
              << std::endl;
    return 0;
  }
  auto done = vault.value()->revoke(args.words[0], names);
  if (!done.ok()) return vault_failed(done.error());
  if (!done.value()) {
    std::cerr << "hearth vault: " << args.words[0] << " had no such grant" << std::endl;
    return 1;
  }
  return 0;
}

/// Takes the state dir's vault as it is after a rollback refusal (docs/a2s.md, "Vault"): the
/// operator restored an older copy on purpose, or knows why the record is gone.
int accept_rollback(const VaultArgs& args) {
  const fs::path dir = args.state_dir.empty() ? default_state_dir() : args.state_dir;
  const fs::path db = dir / "vault.db";
  std::error_code ec;
  if (!fs::exists(db, ec)) {
    std::cerr << "hearth vault: there is no vault at " << db.string() << std::endl;
    return 1;
  }
  auto key = vault::MasterKey::open(dir / "vault.key");
  if (!key.ok()) return vault_failed(key.error());
  auto done = vault::Vault::accept_rollback(db, std::move(key).value());
  if (!done.ok()) return vault_failed(done.error());
  const auto& r = done.value();
  if (r.accepted.empty()) {
    std::cerr << "hearth vault: " << db.string() << " is current (generation " << r.generation
              << "): nothing to accept" << std::endl;
    return 0;
  }
  std::cerr << "accepted " << db.string() << " as it is. It was refused because:\n  " << r.accepted
            << "\nIt is generation " << r.generation
            << " now: every other copy of the vault, the one it replaced too, is refused from "
               "now on. Check its values and grants (hearth vault list --state-dir "
            << dir.string() << ")." << std::endl;
  return 0;
}

}  // namespace

CLI::App* add_vault_command(CLI::App& app, std::function<int()>& run) {
  auto* vault = app.add_subcommand(
      "vault",
      "The A2S variable vault: set, get, list, delete, trust, revoke, accept-rollback "
      "(docs/a2s.md)");
  vault->require_subcommand(1);
  static VaultArgs args;
  const auto common = [](CLI::App* cmd, const std::string& words_help) {
    cmd->add_option("--state-dir", args.state_dir, "The state dir (its vault.db and vault.key)");
    cmd->add_option("words", args.words, words_help);
  };
  auto* set_cmd = vault->add_subcommand(
      "set", "Store a value (read from stdin when not given, to keep it out of shell history)");
  common(set_cmd, "SCOPE NAME [VALUE]: SCOPE is a domain (host[:port]) or global");
  set_cmd->add_option("--expires-in", args.expires_in, "Seconds until the value expires");
  set_cmd->callback([&run] { run = [] { return set(args); }; });
  auto* get_cmd = vault->add_subcommand("get", "Print a value");
  common(get_cmd, "SCOPE NAME");
  get_cmd->callback([&run] { run = [] { return get(args); }; });
  auto* list_cmd = vault->add_subcommand("list", "List names and metadata (never values)");
  common(list_cmd, "[SCOPE]");
  list_cmd->add_flag("--json", args.json, "Print JSON");
  list_cmd->callback([&run] { run = [] { return list(args); }; });
  auto* delete_cmd = vault->add_subcommand("delete", "Delete a value");
  common(delete_cmd, "SCOPE NAME");
  delete_cmd->callback([&run] { run = [] { return remove(args); }; });
  auto* trust_cmd = vault->add_subcommand(
      "trust", "Let DOMAIN read the named global variables (none named: every one)");
  common(trust_cmd, "DOMAIN [NAME...]");
  trust_cmd->callback([&run] { run = [] { return trust(args, true); }; });
  auto* revoke_cmd = vault->add_subcommand(
      "revoke", "Take back DOMAIN's grants (none named: every grant of the domain)");
  common(revoke_cmd, "DOMAIN [NAME...]");
  revoke_cmd->callback([&run] { run = [] { return trust(args, false); }; });
  auto* accept_cmd = vault->add_subcommand(
      "accept-rollback",
      "Take the vault file as it is after it was refused as rolled back, replaced or edited "
      "(an older copy restored on purpose): it becomes the newest generation");
  accept_cmd->add_option("--state-dir", args.state_dir,
                         "The state dir (its vault.db, vault.key and generation record)");
  accept_cmd->callback([&run] { run = [] { return accept_rollback(args); }; });
  vault->footer("Exit status: 0 done, 1 failed or not found, 2 usage or an invalid name.");
  return vault;
}

}  // namespace hearth::cli
