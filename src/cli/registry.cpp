// `hearth registry ...`: the A2S registry without a daemon (check, seal, search, execute,
// import), and open_vault, which `hearth serve` shares.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "a2s/definition/definition.hpp"
#include "a2s/exec/gateway.hpp"
#include "a2s/openapi/openapi.hpp"
#include "cli/common.hpp"
#include "cli/usage.hpp"
#include "common/atomic_file.hpp"
#include "httpclient/client.hpp"
#include "vault/vault.hpp"

namespace hearth::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

Result<std::string> read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error::make(ErrorCode::kInvalidParams, file.string() + ": cannot be read");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void print_failures(const std::vector<a2s::LoadFailure>& failures) {
  for (const auto& failure : failures) {
    for (const auto& problem : failure.problems) {
      std::cerr << failure.file.string() << ": " << problem.to_string() << "\n";
    }
  }
}

int check(const std::vector<fs::path>& dirs, bool as_json) {
  json::array services;
  json::array failures;
  for (const auto& dir : dirs) {
    a2s::LoadResult loaded;
    if (fs::is_directory(dir)) {
      loaded = a2s::load_directory(dir);
    } else {
      Problems problems;
      auto one = a2s::load_file(dir, problems);
      if (one.ok()) {
        loaded.definitions.push_back(std::move(one).value());
      } else {
        if (problems.empty()) problems.push_back({"", one.error().message});
        loaded.failures.push_back({dir, std::move(problems)});
      }
    }
    for (const auto& def : loaded.definitions) {
      json::array warnings;
      for (const auto& w : def->warnings) warnings.push_back(json::string(w.to_string()));
      services.push_back(json::object{{"service", def->service_name},
                                      {"file", def->source},
                                      {"domain", def->domain},
                                      {"capabilities", def->capabilities.size()},
                                      {"warnings", warnings}});
      if (!as_json) {
        std::cout << "ok  " << def->service_name << " (" << def->domain << ", "
                  << def->capabilities.size() << " capabilities)  " << def->source << "\n";
        for (const auto& w : def->warnings) {
          std::cerr << def->source << ": warning: " << w.to_string() << "\n";
        }
      }
    }
    for (const auto& failure : loaded.failures) {
      json::array problems;
      for (const auto& p : failure.problems) problems.push_back(json::string(p.to_string()));
      failures.push_back(
          json::object{{"file", failure.file.string()}, {"problems", std::move(problems)}});
    }
    if (!as_json) print_failures(loaded.failures);
  }
  if (as_json) {
    std::cout << json::dump(json::object{{"services", services}, {"failures", failures}})
              << std::endl;
  } else if (!failures.empty()) {
    std::cerr << failures.size() << " definition file(s) refused\n";
  }
  return failures.empty() ? 0 : 1;
}

/// Sets the checksum of a YAML definition in its text, so comments and layout stay: the
/// top-level `checksum:` line is replaced (or one is added after `version:`). JSON files are
/// written back whole, sealed.
int seal(const fs::path& file, bool to_stdout) {
  auto text = read_text(file);
  if (!text.ok()) {
    std::cerr << "hearth registry seal: " << text.error().message << "\n";
    return 1;
  }
  auto document = a2s::yaml_to_json(text.value());
  if (!document.ok()) {
    std::cerr << file.string() << ": " << document.error().message << "\n";
    return 1;
  }
  if (!document->is_object()) {
    std::cerr << file.string() << ": a service definition is a mapping (object)\n";
    return 1;
  }
  const std::string sum = a2s::checksum_of(document.value());
  std::string out;
  const auto ext = file.extension().string();
  if (ext == ".json") {
    out = json::dump(a2s::seal(document.value())) + "\n";
  } else {
    std::istringstream lines(text.value());
    std::string line;
    bool replaced = false;
    std::vector<std::string> kept;
    while (std::getline(lines, line)) kept.push_back(line);
    for (auto& l : kept) {
      if (l.rfind("checksum:", 0) == 0) {
        l = "checksum: \"" + sum + "\"";
        replaced = true;
      }
    }
    if (!replaced) {
      for (std::size_t i = 0; i < kept.size(); ++i) {
        if (kept[i].rfind("version:", 0) == 0) {
          kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                      "checksum: \"" + sum + "\"");
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) kept.push_back("checksum: \"" + sum + "\"");
    for (const auto& l : kept) out += l + "\n";
  }
  // What was written must load: the checksum matches, and nothing else is wrong.
  auto again = a2s::yaml_to_json(out);
  Problems problems;
  if (again.ok()) {
    (void)a2s::parse_definition(again.value(), problems);
  } else {
    problems.push_back({"", again.error().message});
  }
  if (to_stdout) {
    std::cout << out;
  } else {
    if (auto written = write_file_atomic(file, out); !written.ok()) {
      std::cerr << "hearth registry seal: " << written.error().message << "\n";
      return 1;
    }
    std::cerr << file.string() << ": checksum " << sum << "\n";
  }
  for (const auto& p : problems) std::cerr << file.string() << ": " << p.to_string() << "\n";
  return problems.empty() ? 0 : 1;
}

/// How the request's words were read: each word's terms, with how and at what weight.
void print_reading(const std::vector<a2s::QueryWord>& reading) {
  std::printf("reading of the request:\n");
  for (const auto& w : reading) {
    std::printf("  %s%s%s:", w.word.c_str(),
                w.name ? " (a name: counts 0.3 unless it names the service)" : "",
                w.place ? " (a place: services whose texts name only other places count 0.6)" : "");
    if (w.terms.empty()) std::printf(" matches nothing in the registry");
    for (const auto& t : w.terms) {
      std::printf(" %s (%s %.2f)", t.term.c_str(), t.via.c_str(), t.weight);
    }
    std::printf("\n");
  }
  std::printf("\n");
}

/// Which terms made a capability's score, from which fields.
void print_matches(const std::vector<a2s::TermMatch>& matches) {
  for (const auto& m : matches) {
    std::printf("         %s -> %s (%s, weight %.2f, idf %.2f): %.3f =", m.word.c_str(),
                m.term.c_str(), m.via.c_str(), m.weight, m.idf, m.score);
    bool first = true;
    for (std::size_t i = 0; i < m.fields.size(); ++i) {
      if (m.fields[i] <= 0) continue;
      std::printf("%s %s %.3f", first ? "" : " +", std::string(a2s::kSearchFields[i]).c_str(),
                  m.fields[i]);
      first = false;
    }
    std::printf("\n");
  }
}

int search(const std::vector<fs::path>& dirs, const std::vector<std::string>& words,
           std::size_t limit, bool as_json, bool explain) {
  std::string query;
  for (const auto& w : words) query += (query.empty() ? "" : " ") + w;
  a2s::Catalog catalog(dirs);
  catalog.load();
  const auto snap = catalog.snapshot();
  print_failures(snap->failures);
  a2s::SearchOptions options;
  options.limit = limit;
  options.explain = explain;
  const auto hits = snap->index->search(query, options);
  auto response = a2s::registry_response(hits);
  if (as_json) {
    if (explain) {
      response.as_object()["explanation"] = a2s::query_explanation(snap->index->interpret(query));
    }
    std::cout << json::dump(response) << std::endl;
    return 0;
  }
  if (explain) print_reading(snap->index->interpret(query));
  if (hits.empty()) {
    std::cout << "no service matches '" << query << "'\n";
    return 0;
  }
  for (const auto& hit : hits) {
    std::printf("%.3f  %s  (%s)\n", hit.score, hit.definition->service_name.c_str(),
                hit.definition->domain.c_str());
    std::printf("       %s\n", hit.definition->service_description.c_str());
    if (hit.elsewhere) {
      std::printf("       (its texts name only places other than the request's: x0.6)\n");
    }
    for (const auto& cap : hit.capabilities) {
      const auto& c = hit.definition->capabilities[cap.index];
      std::printf("  %.3f  %s: %s\n", cap.score, c.name.c_str(), c.description.c_str());
      if (explain) print_matches(cap.matches);
    }
  }
  return 0;
}

struct ExecuteOptions {
  std::vector<fs::path> dirs;
  fs::path state_dir;
  std::vector<std::string> local_domains;
  std::string service;
  std::string capability;
  std::string variables = "{}";
  bool dry_run = false;
  bool store = false;
  bool json = false;
  int timeout_ms = 30000;
};

/// Exit codes: 0 ok (or dry run), 1 the service failed or the call could not be made, 3 needs
/// input, 4 rate limited.
int execute(const ExecuteOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  auto variables = json::parse_text(options.variables);
  if (!variables.ok() || !variables->is_object()) {
    std::cerr << "hearth registry execute: the variables must be a JSON object\n";
    return 2;
  }
  auto vault = open_vault(options.state_dir.empty() ? default_state_dir() : options.state_dir);
  if (!vault.ok()) {
    std::cerr << "hearth registry execute: " << vault.error().message << "\n";
    return 1;
  }
  asio::io_context ioc;
  auto client = std::make_shared<httpclient::Client>(ioc.get_executor());
  a2s::GatewayOptions gateway_options;
  gateway_options.registry_dirs = options.dirs;
  gateway_options.local_domains = options.local_domains;
  gateway_options.timeout = std::chrono::milliseconds(options.timeout_ms);
  a2s::Gateway gateway(ioc.get_executor(), gateway_options, vault.value(), client);
  gateway.load();
  print_failures(gateway.snapshot()->failures);
  a2s::ExecuteParams params;
  params.service = options.service;
  params.capability = options.capability;
  params.variables = variables->as_object();
  params.dry_run = options.dry_run;
  params.store = options.store;
  params.caller = "hearth registry execute";
  std::optional<Result<json::value>> result;
  const auto run = [&]() -> asio::awaitable<void> {
    result.emplace(co_await gateway.execute(std::move(params)));
    client->shutdown();
  };
  asio::co_spawn(ioc, run(), asio::detached);
  ioc.run();
  gateway.stop();
  if (!result || !result->ok()) {
    const Error error = result ? result->error() : Error::make(ErrorCode::kInternalError, "");
    print_error("registry execute", error, options.json);
    return 1;
  }
  std::cout << json::dump(result->value()) << std::endl;
  const auto status = result->value().as_object().at("status").as_string();
  if (status == "ok" || status == "dry_run") return 0;
  if (status == "needs_input") return 3;
  if (status == "rate_limited") return 4;
  return 1;
}

struct ImportOptions {
  fs::path file;
  std::string server;
  std::string name;
  fs::path out;
};

int import(const ImportOptions& options) {
  auto text = read_text(options.file);
  if (!text.ok()) {
    std::cerr << "hearth registry import: " << text.error().message << "\n";
    return 1;
  }
  auto document = a2s::yaml_to_json(text.value());
  if (!document.ok()) {
    std::cerr << options.file.string() << ": " << document.error().message << "\n";
    return 1;
  }
  a2s::ImportOptions import_options;
  import_options.server_url = options.server;
  import_options.service_name = options.name;
  auto imported = a2s::import_openapi(document.value(), import_options);
  if (!imported.ok()) {
    std::cerr << options.file.string() << ": " << imported.error().message << "\n";
    return 1;
  }
  for (const auto& warning : imported->warnings) {
    std::cerr << options.file.string() << ": warning: " << warning << "\n";
  }
  const std::string yaml = a2s::json_to_yaml(imported->definition);
  if (options.out.empty() || options.out == "-") {
    std::cout << yaml;
    return 0;
  }
  if (auto written = write_file_atomic(options.out, yaml); !written.ok()) {
    std::cerr << "hearth registry import: " << written.error().message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

CLI::App* add_registry_command(CLI::App& app, std::function<int()>& run) {
  auto* registry = app.add_subcommand(
      "registry", "A2S service definitions: check, seal, search, execute, import (docs/a2s.md)");
  registry->require_subcommand(1);

  static std::vector<fs::path> check_dirs;
  static bool check_json = false;
  auto* check_cmd = registry->add_subcommand(
      "check", "Load definition files or folders; list every problem (exit 1 if any)");
  check_cmd->add_option("paths", check_dirs, "Definition files or registry folders")
      ->required()
      ->check(CLI::ExistingPath);
  check_cmd->add_flag("--json", check_json, "Print the report as JSON");
  check_cmd->callback([&run] { run = [] { return check(check_dirs, check_json); }; });

  static fs::path seal_file;
  static bool seal_stdout = false;
  auto* seal_cmd = registry->add_subcommand(
      "seal", "Compute a definition's checksum and write it into the file");
  seal_cmd->add_option("file", seal_file, "A definition (.yaml, .yml or .json)")
      ->required()
      ->check(CLI::ExistingFile);
  seal_cmd->add_flag("--stdout", seal_stdout, "Print the sealed definition instead of writing it");
  seal_cmd->callback([&run] { run = [] { return seal(seal_file, seal_stdout); }; });

  static std::vector<fs::path> search_dirs;
  static std::vector<std::string> search_words;
  static std::size_t search_limit = 5;
  static bool search_json = false;
  static bool search_explain = false;
  auto* search_cmd =
      registry->add_subcommand("search", "Rank services and capabilities for a request");
  search_cmd->add_option("--registry", search_dirs, "Registry folder (repeatable)")
      ->allow_extra_args(false)
      ->required()
      ->check(CLI::ExistingDirectory);
  search_cmd->add_option("query", search_words, "What the user asked for")->required();
  search_cmd->add_option("--limit", search_limit, "Services at most")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  search_cmd->add_flag("--json", search_json, "Print the registry response as JSON");
  search_cmd->add_flag("--explain", search_explain,
                       "Show how the request's words were read and which terms matched which "
                       "fields with what weight");
  search_cmd->callback([&run] {
    run = [] {
      return search(search_dirs, search_words, search_limit, search_json, search_explain);
    };
  });

  static ExecuteOptions exec;
  auto* exec_cmd = registry->add_subcommand(
      "execute", "Execute a capability (variables from the vault, the JSON argument, defaults)");
  exec_cmd->add_option("--registry", exec.dirs, "Registry folder (repeatable)")
      ->allow_extra_args(false)
      ->required()
      ->check(CLI::ExistingDirectory);
  exec_cmd->add_option("--state-dir", exec.state_dir, "Where the vault is");
  exec_cmd
      ->add_option("--local-domain", exec.local_domains,
                   "A local test domain (host:port; http:// is assumed, https://host:port "
                   "for TLS): may be plain HTTP and resolve to this machine (repeatable)")
      ->allow_extra_args(false);
  exec_cmd->add_option("--timeout", exec.timeout_ms, "Milliseconds for one HTTP exchange")
      ->capture_default_str();
  exec_cmd->add_flag("--dry-run", exec.dry_run, "Fill the request and print it; send nothing");
  exec_cmd->add_flag("--store", exec.store,
                     "Store the given service and global variables in the vault");
  exec_cmd->add_flag("--json", exec.json,
                     "On error, print the JSON-RPC error object on stdout instead of a readable "
                     "message on stderr");
  exec_cmd->add_option("service", exec.service, "serviceName")->required();
  exec_cmd->add_option("capability", exec.capability, "Capability name")->required();
  exec_cmd->add_option("variables", exec.variables, "JSON object of NAME: value");
  exec_cmd->footer(
      "Prints the result as JSON (an error: readable on stderr, or JSON with --json). Exit "
      "status: 0 ok, 1 failed or error, 3 needs input, 4 rate limited.");
  exec_cmd->callback([&run] { run = [] { return execute(exec); }; });

  static ImportOptions imp;
  auto* import_cmd = registry->add_subcommand(
      "import", "Turn an OpenAPI 3 document into a sealed A2S definition (YAML)");
  import_cmd->add_option("file", imp.file, "OpenAPI 3.0 or 3.1 document (YAML or JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  import_cmd->add_option("--server", imp.server, "The servers[] URL to use (default: the first)");
  import_cmd->add_option("--name", imp.name, "serviceName (default: from info.title)");
  import_cmd->add_option("-o,--output", imp.out, "Write here instead of stdout");
  import_cmd->callback([&run] { run = [] { return import(imp); }; });

  return registry;
}

}  // namespace hearth::cli
