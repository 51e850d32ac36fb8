// `hearth mcp tools PATH`: what each MCP server of a service's mcp-config.json offers.
#include "handlers/mcp/mcp.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <iostream>

#include "cli/common.hpp"
#include "handlers/builtin/builtin.hpp"
#include "handlers/handler.hpp"
#include "jail/jail.hpp"
#include "manifest/manifest.hpp"
#include "proc/process.hpp"
#include "schema/schema.hpp"

namespace hearth::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

struct ToolsOptions {
  fs::path path;
  bool json = false;
  int timeout_ms = 30000;
  bool insecure_no_sandbox = false;
};

/// The service folder PATH names: the folder itself, or the folder of its lavs.json or
/// mcp-config.json.
fs::path service_dir(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::weakly_canonical(path, ec);
  return fs::weakly_canonical(path, ec).parent_path();
}

int list_tools(const ToolsOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  const fs::path dir = service_dir(options.path);
  std::error_code ec;
  if (!fs::exists(dir / "mcp-config.json", ec)) {
    std::cerr << "hearth: " << dir.string() << " has no mcp-config.json\n";
    return 2;
  }
  auto config = hearth::mcp::load_config(dir);
  if (!config.ok()) {
    std::cerr << "hearth: " << (dir / "mcp-config.json").string() << ": "
              << config.error().message.substr(config.error().message.find(": ") + 2) << "\n";
    return 2;
  }

  // The permissions a server runs under: those of the first endpoint that calls it, else the
  // manifest's, as `hearth serve` would give it.
  std::optional<manifest::Manifest> service;
  if (fs::exists(dir / "lavs.json", ec)) {
    auto registry = handlers::make_builtin_registry({});
    auto compiler = schema::make_draft7_compiler();
    Problems problems;
    service = manifest::load(dir, *registry, *compiler, problems);
    for (const auto& p : problems) {
      spdlog::warn("{}: {} (servers run without its permissions)", (dir / "lavs.json").string(),
                   p.to_string());
    }
  }
  auto permissions_of = [&service](const std::string& server) {
    if (!service) return manifest::Permissions{};
    for (const auto& ep : service->endpoints) {
      const auto* name = ep.handler.if_contains("server");
      if (ep.handler_type == "mcp" && name != nullptr && name->is_string() &&
          name->get_string() == server) {
        return ep.effective;
      }
    }
    return service->permissions;
  };

  jail::JailOptions jail_options;
  jail_options.launcher = proc::launcher();
  jail_options.insecure_no_sandbox = options.insecure_no_sandbox;
  auto jail = jail::Jail::create(jail_options);
  if (!jail.ok()) {
    std::cerr << "hearth: " << jail.error().message << "\n";
    return 2;
  }
  handlers::KindOptions kinds;
  kinds.jail = std::make_shared<const jail::Jail>(std::move(jail).value());

  asio::io_context ioc;
  std::vector<handlers::mcp::ServerTools> servers;
  // Made outside the coroutine: GCC 12 destroys a `?:` temporary inside a co_await expression
  // wrongly.
  const std::string name = service ? service->name : dir.filename().string();
  auto work =
      handlers::mcp::list_tools(ioc.get_executor(), kinds, name, dir, config.value(),
                                permissions_of, std::chrono::milliseconds(options.timeout_ms));
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        servers = co_await std::move(work);
        ioc.stop();
      },
      asio::detached);
  ioc.run();
  proc::kill_all();

  bool all_ok = true;
  json::array out;
  for (const auto& s : servers) {
    json::object entry;
    entry["name"] = s.name;
    entry["transport"] = s.transport;
    if (!s.tools.ok()) {
      all_ok = false;
      entry["error"] = to_json(s.tools.error());
    } else {
      entry["protocolVersion"] = s.protocol_version;
      entry["serverInfo"] = s.server_info;
      json::array tools;
      for (const auto& t : s.tools.value()) tools.emplace_back(t.raw);
      entry["tools"] = std::move(tools);
    }
    out.emplace_back(std::move(entry));
  }
  if (options.json) {
    json::object doc;
    doc["servers"] = std::move(out);
    std::cout << json::dump(doc) << std::endl;
    return all_ok ? 0 : 1;
  }
  for (const auto& s : servers) {
    std::cout << s.name << " (" << s.transport;
    if (!s.tools.ok()) {
      std::cout << "): " << s.tools.error().message << "\n";
      continue;
    }
    std::cout << ", MCP " << s.protocol_version;
    const auto* info_name = s.server_info.if_contains("name");
    const auto* info_version = s.server_info.if_contains("version");
    if (info_name != nullptr && info_name->is_string()) {
      std::cout << ", " << std::string_view(info_name->get_string());
      if (info_version != nullptr && info_version->is_string()) {
        std::cout << " " << std::string_view(info_version->get_string());
      }
    }
    std::cout << "): " << s.tools.value().size()
              << (s.tools.value().size() == 1 ? " tool\n" : " tools\n");
    for (const auto& t : s.tools.value()) {
      std::cout << "  " << t.name;
      if (!t.description.empty()) {
        std::string first_line = t.description.substr(0, t.description.find('\n'));
        std::cout << ": " << first_line;
      }
      std::cout << "\n    input: "
                << (t.input_schema.is_null() ? std::string("(none)") : json::dump(t.input_schema))
                << "\n";
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace

void add_mcp_serve_command(CLI::App& mcp_cmd, std::function<bool()>& chosen,
                           std::function<int()>& run);  // cli/mcp_serve.cpp

CLI::App* add_mcp_command(CLI::App& app, std::function<int()>& run) {
  auto* mcp_cmd = app.add_subcommand(
      "mcp", "hearth as an MCP server (serve), and the MCP servers of a service (tools)");
  mcp_cmd->require_subcommand(1);
  auto options = std::make_shared<ToolsOptions>();
  auto* tools_cmd = mcp_cmd->add_subcommand(
      "tools",
      "Start each configured MCP server and list the tools it offers, with their input "
      "schemas");
  tools_cmd
      ->add_option("path", options->path, "Service folder, its lavs.json or its mcp-config.json")
      ->required()
      ->check(CLI::ExistingPath);
  tools_cmd->add_flag("--json", options->json, "Print the servers and their tools as JSON");
  tools_cmd
      ->add_option("--timeout", options->timeout_ms,
                   "Time (ms) each server gets to start and list its tools")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  tools_cmd->add_flag("--insecure-no-sandbox", options->insecure_no_sandbox,
                      "Run stdio servers WITHOUT the jail");
  tools_cmd->footer(
      "Stdio servers run under the jail with the permissions of the first endpoint that calls\n"
      "them (else the manifest's). Exit status: 0 when every server answered, 1 when one did\n"
      "not, 2 when the configuration is missing or invalid.");
  std::function<bool()> serve_chosen;
  std::function<int()> serve_run;
  add_mcp_serve_command(*mcp_cmd, serve_chosen, serve_run);
  run = [options, serve_chosen, serve_run] {
    return serve_chosen() ? serve_run() : list_tools(*options);
  };
  return mcp_cmd;
}

}  // namespace hearth::cli
