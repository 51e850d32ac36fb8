#include "cli/cli.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "cli/common.hpp"
#include "cli/completion.hpp"
#include "cli/manpage.hpp"
#include "cli/remote.hpp"
#include "cli/summary.hpp"
#include "cli/usage.hpp"
#include "jail/jail.hpp"
#include "methods/lavs/lavs.hpp"
#include "proc/process.hpp"

namespace hearth::cli {
namespace asio = boost::asio;

CLI::App* add_app_command(CLI::App& app, std::function<int()>& run);        // cli/app.cpp
CLI::App* add_lafs_command(CLI::App& app, std::function<int()>& run);       // cli/lafs.cpp
CLI::App* add_mcp_command(CLI::App& app, std::function<int()>& run);        // cli/mcp.cpp
CLI::App* add_registry_command(CLI::App& app, std::function<int()>& run);   // cli/registry.cpp
CLI::App* add_vault_command(CLI::App& app, std::function<int()>& run);      // cli/vault.cpp
CLI::App* add_workspace_command(CLI::App& app, std::function<int()>& run);  // cli/workspace.cpp
CLI::App* add_agent_command(CLI::App& app, std::function<int()>& run);      // cli/workspace.cpp
CLI::App* add_control_commands(CLI::App& app, std::function<int()>& run);   // cli/control.cpp
CLI::App* add_config_command(CLI::App& app, std::function<int()>& run);     // cli/config.cpp
namespace fs = std::filesystem;

namespace {
std::filesystem::path& configured_state_dir() {
  static std::filesystem::path dir;
  return dir;
}
}  // namespace

fs::path default_state_dir() {
  const auto& configured = configured_state_dir();
  return configured.empty() ? daemon::default_state_dir() : configured;
}

void set_configured_state_dir(fs::path dir) {
  configured_state_dir() = std::move(dir);
}

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("hearth");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(level));
}

namespace {

int check(const std::vector<fs::path>& paths, bool as_json, bool strict) {
  asio::io_context ioc;
  host::LoadReport report;
  host::HostOptions options;
  options.strict = strict;
  auto host = host::Host::load(paths, options, ioc.get_executor(), report);
  if (as_json) {
    std::cout << json::dump(report_json(host.get(), report)) << std::endl;
  } else if (host) {
    for (const auto& w : report.warnings) std::cout << "warning: " << w << "\n";
    for (const auto& s : *host->services()) std::cout << summary_text(s->manifest);
  } else {
    std::size_t count = 0;
    for (const auto& failure : report.failures) {
      for (const auto& problem : failure.problems) {
        std::cout << (failure.file.empty() ? std::string("hearth") : failure.file.string()) << ": "
                  << problem.to_string() << "\n";
        ++count;
      }
    }
    std::cout << count << (count == 1 ? " problem" : " problems") << "\n";
  }
  return host ? 0 : 1;
}

int call(const fs::path& path, const std::string& service, const std::string& endpoint,
         const std::string& input_text, const fs::path& state_dir, int default_timeout_ms,
         bool pretty, bool insecure_no_sandbox, bool lafs, bool as_json) {
  std::signal(SIGPIPE, SIG_IGN);
  json::value input = nullptr;
  if (!input_text.empty()) {
    auto parsed = json::parse_text(input_text);
    if (!parsed.ok()) {
      if (lafs) return print_lafs_input_error(service, endpoint, parsed.error());
      print_error("call", parsed.error(), as_json);
      return 2;
    }
    input = std::move(parsed).value();
  }
  asio::io_context ioc;
  host::HostOptions options;
  options.default_timeout = std::chrono::milliseconds(default_timeout_ms);
  jail::JailOptions jail_options;
  jail_options.launcher = proc::launcher();
  jail_options.insecure_no_sandbox = insecure_no_sandbox;
  auto jail = jail::Jail::create(jail_options);
  if (!jail.ok()) {
    print_error("call", jail.error(), as_json);
    return 2;
  }
  if (insecure_no_sandbox) spdlog::warn("--insecure-no-sandbox: the handler runs WITHOUT the jail");
  options.kinds.jail = std::make_shared<const jail::Jail>(std::move(jail).value());
  options.kinds.warm_pools = false;  // only the called endpoint's JS workers, at the call
  host::LoadReport report;
  auto host = host::Host::load({path}, options, ioc.get_executor(), report);
  print_load_report(report);
  if (!host) return 2;

  host::AuditLog audit;
  std::string error;
  fs::path dir = state_dir.empty() ? default_state_dir() : state_dir;
  if (ensure_private_dir(dir, error)) {
    if (auto st = audit.open(dir / "audit.log"); st.ok()) host->set_audit(&audit);
  }

  // The same pipeline as the daemon's lavs/call, through the dispatcher, without a socket.
  rpc::Dispatcher dispatcher;
  methods::lavs::add_methods(dispatcher, *host);
  methods::lavs::name_lafs_operations(dispatcher, *host);
  json::object params;
  if (!service.empty()) params["service"] = service;
  params["endpoint"] = endpoint;
  if (!input.is_null()) params["input"] = input;
  if (lafs) params["_lafs"] = true;
  json::object request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "lavs/call"}, {"params", params}};

  std::optional<json::value> response;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        response = co_await dispatcher.handle_value(
            request, std::make_shared<rpc::Session>("inproc", nullptr));
        // Long-lived helpers (JS workers) would keep the loop running: the call is what we came
        // for.
        ioc.stop();
      },
      asio::detached);
  ioc.run();
  host->shutdown();
  proc::kill_all();
  if (!response || !response->is_object()) {
    std::cout << R"({"code":-32603,"message":"Internal error: no response"})" << std::endl;
    return 1;
  }
  auto& obj = response->as_object();
  auto print = [&](const json::value& v) {
    std::cout << (pretty ? pretty_json(v) : json::dump(v)) << std::endl;
  };
  if (auto* err = obj.if_contains("error")) {
    print_error("call", *err, as_json);
    return 1;
  }
  print(obj.at("result"));
  return lafs ? lafs_exit_code(obj.at("result")) : 0;
}

/// `hearth call --daemon SERVICE ENDPOINT [INPUT]`: lavs/call through the running daemon.
int call_through_daemon(const std::string& service, const std::string& endpoint,
                        const std::string& input_text, const fs::path& state_dir, bool pretty,
                        bool as_json) {
  json::value input = nullptr;
  if (!input_text.empty()) {
    auto parsed = json::parse_text(input_text);
    if (!parsed.ok()) {
      print_error("call", parsed.error(), as_json);
      return 2;
    }
    input = std::move(parsed).value();
  }
  auto daemon = find_daemon(state_dir);
  if (!daemon.ok()) {
    std::cerr << "hearth call: " << daemon.error().message << std::endl;
    return 2;
  }
  json::object params{{"service", service}, {"endpoint", endpoint}};
  if (!input.is_null()) params["input"] = std::move(input);
  json::object request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "lavs/call"}, {"params", params}};
  auto body = post_rpc(daemon.value(), json::dump(request));
  if (!body.ok()) {
    std::cerr << "hearth call: " << body.error().message << std::endl;
    return 2;
  }
  auto response = json::parse_text(body.value());
  if (!response.ok() || !response.value().is_object()) {
    std::cerr << "hearth call: the daemon's answer is not JSON-RPC: " << body.value() << std::endl;
    return 1;
  }
  const auto& obj = response.value().get_object();
  const auto print = [&](const json::value& v) {
    std::cout << (pretty ? pretty_json(v) : json::dump(v)) << std::endl;
  };
  if (const auto* err = obj.if_contains("error")) {
    print_error("call", *err, as_json);
    return 1;
  }
  print(obj.at("result"));
  return 0;
}

/// The model servers agent runs use (`hearth serve --model-*`).
void add_model_options(CLI::App& cmd, ServeOptions& options) {
  cmd.add_option("--model-url", options.model_url,
                 "OpenAI-compatible API base URL for agent runs "
                 "(e.g. http://127.0.0.1:11434/v1 for Ollama)");
  cmd.add_option("--model", options.model, "Model name for agent runs");
  cmd.add_option("--model-key", options.model_key_ref,
                 "Vault variable holding the model server's API key (SCOPE::NAME)");
  cmd.add_flag("--model-stream", options.model_stream,
               "Stream agent completions (server-sent events)");
  cmd.add_option("--model-server", options.model_servers,
                 "Another model server a run may choose (NAME=URL); repeatable")
      ->allow_extra_args(false);
  cmd.add_option("--model-server-key", options.model_server_keys,
                 "The vault variable holding a --model-server's key (NAME=SCOPE::NAME); the "
                 "key is sent to that server only; repeatable")
      ->allow_extra_args(false);
  cmd.add_option("--model-tools", options.model_tools,
                 "How tools reach the model servers: native (the API's tools), prompt "
                 "(described in the system prompt, calls read from the text: for servers or "
                 "models without tool support) or auto (native until the server refuses tools)")
      ->check(CLI::IsMember({"auto", "native", "prompt"}))
      ->capture_default_str();
  cmd.add_option("--model-context-chars", options.model_context_chars,
                 "Characters of conversation one model request may carry (older tool "
                 "results are elided past it)")
      ->check(CLI::Range(4000, 4000000))
      ->capture_default_str();
}

/// `hearth serve` and its options, read into `options`.
CLI::App* add_serve_command(CLI::App& app, ServeOptions& options) {
  auto* cmd =
      app.add_subcommand("serve", "Serve LAVS services over HTTP (POST /rpc) and WebSocket (/ws)");
  cmd->add_option("paths", options.paths,
                  "Service folders (holding lavs.json), or folders of them (optional with "
                  "--registry)");
  cmd->add_option("--host", options.address, "Address to bind")->capture_default_str();
  cmd->add_option("--port", options.port, "TCP port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--token-file", options.token_file,
                  "Where the token is kept (mode 0600), the same across restarts unless "
                  "--rotate-token [default: STATE_DIR/token]");
  cmd->add_flag("--rotate-token", options.rotate_token,
                "Start with a new token (clients configured with the old one must be given the "
                "new one); otherwise the token file's token is kept across restarts");
  cmd->add_option("--ready-file", options.ready_file,
                  "Written once serving: JSON with url, port, tokenFile, pid");
  cmd->add_option("--state-dir", options.state_dir,
                  "Audit log and state [default: $XDG_STATE_HOME/hearth or ~/.local/state/hearth]");
  cmd->add_option("--threads", options.threads, "I/O threads; 0: one per core")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--max-request-bytes", options.max_request_bytes,
                  "Largest HTTP body or WebSocket message accepted")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  cmd->add_option("--idle-timeout", options.idle_timeout_s, "Seconds an idle connection is kept")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--max-connections", options.max_connections,
                  "Open connections at most, HTTP and WebSocket (default: from the file "
                  "limit, which hearth raises to its hard limit at start)")
      ->check(CLI::Range(std::size_t{16}, std::size_t{1} << 20));
  cmd->add_option("--max-websockets", options.max_websockets,
                  "WebSocket connections at most (default: max-connections less an eighth, "
                  "kept for HTTP calls)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
  cmd->add_option("--header-timeout", options.header_timeout_ms,
                  "Milliseconds a new connection has to send a request with the token")
      ->capture_default_str()
      ->check(CLI::Range(100, 600000));
  cmd->add_option("--default-timeout", options.default_timeout_ms,
                  "Handler time limit (ms) when neither the handler nor maxExecutionTime sets one")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400000));
  cmd->add_option("--js-workers", options.js_workers,
                  "JavaScript worker processes per pool (function handlers: one pool per "
                  "service and permission set), started at load")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--allow-origin", options.allowed_origins,
                  "Extra allowed Origin (e.g. http://localhost:3000); repeatable");
  cmd->add_option("--registry", options.registry_dirs,
                  "A2S registry folder of service definitions (repeatable; reloaded on change)")
      ->allow_extra_args(false);
  cmd->add_option("--local-domain", options.local_domains,
                  "A2S local test domain (host:port; plain HTTP, or https://host:port for "
                  "TLS), allowed to resolve to this machine; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--workspace", options.workspace_dirs,
                  "Virtual workspace folder (holding workspace.yaml); repeatable")
      ->allow_extra_args(false);
  add_model_options(*cmd, options);
  cmd->add_option("--database", options.database,
                  "Keep the state in this PostgreSQL database (postgresql://USER@HOST/DB), "
                  "which several daemons may share; default: SQLite files in the state dir")
      ->envname("HEARTH_DATABASE");
  cmd->add_option("--registry-timeout", options.registry_timeout_ms,
                  "Milliseconds an A2S request (one HTTP exchange) may take")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  cmd->add_option("--allow-view-origin", options.view_origins,
                  "Origin a `cdn` view component may load its code from "
                  "(e.g. https://cdn.example.com); repeatable. None by default");
  cmd->add_option("--web-dir", options.web_dir,
                  "Folder of the view host's page (default: the web/ folder hearth was "
                  "built with, or $HEARTH_WEB_DIR)");
  cmd->add_flag("--open", options.open,
                "Open the view host in a browser (xdg-open) once the daemon is ready");
  cmd->add_flag("--json", options.json, "Print the start-up information as JSON on stdout");
  cmd->add_flag("--strict", options.strict,
                "Refuse a manifest with warnings (unknown keys, such as a misspelt fileAccess), "
                "as one with problems");
  cmd->add_flag("--watch", options.watch,
                "Reload services whose lavs.json is added, edited or removed while serving "
                "(calls in flight finish on the old definition; clients get "
                "lavs/servicesChanged)");
  cmd->add_option("--watch-interval", options.watch_interval_ms,
                  "How often --watch looks at the manifests, in milliseconds")
      ->capture_default_str()
      ->check(CLI::Range(20, 60000));
  cmd->add_option("--mcp-progress-interval", options.mcp_progress_interval_ms,
                  "How often (ms) a running tool call on /mcp reports progress, when the "
                  "client asked for it")
      ->capture_default_str()
      ->check(CLI::Range(10, 600000));
  cmd->add_flag("--insecure-no-sandbox", options.insecure_no_sandbox,
                "Run handlers WITHOUT the jail (permissions not enforced by the OS; for "
                "machines that lack Landlock, seccomp or namespaces). Logged on every call");
  return cmd;
}

/// `--config` default: $XDG_CONFIG_HOME/hearth/config.toml, else ~/.config/hearth/config.toml.
std::string default_config_file() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    return (fs::path(xdg) / "hearth" / "config.toml").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (fs::path(home) / ".config" / "hearth" / "config.toml").string();
  }
  return {};
}

/// `hearth serve` once its options are read: it needs something to serve, that exists. (The
/// folders are checked here rather than by CLI11, which checks the configuration file's
/// [serve] values whatever the command: `hearth status` must work when a served folder is gone.)
int serve_something(const ServeOptions& options) {
  if (options.paths.empty() && options.registry_dirs.empty() && options.workspace_dirs.empty()) {
    std::cerr << "paths is required (or --registry, or --workspace): give the service folders "
                 "here or in the configuration file ([serve] paths = [\"/path/to/services\"] in "
              << default_config_file() << ")\nRun with --help for more information." << std::endl;
    return static_cast<int>(CLI::ExitCodes::RequiredError);
  }
  const auto missing = [](const char* what, const fs::path& path, bool directory) {
    std::error_code ec;
    const bool ok = directory ? fs::is_directory(path, ec) : fs::exists(path, ec);
    if (ok) return false;
    std::cerr << what << ": " << (directory ? "Directory" : "Path")
              << " does not exist: " << path.string() << "\nRun with --help for more information."
              << std::endl;
    return true;
  };
  for (const auto& p : options.paths) {
    if (missing("paths", p, false)) return static_cast<int>(CLI::ExitCodes::ValidationError);
  }
  for (const auto& p : options.registry_dirs) {
    if (missing("--registry", p, true)) return static_cast<int>(CLI::ExitCodes::ValidationError);
  }
  for (const auto& p : options.workspace_dirs) {
    if (missing("--workspace", p, true)) return static_cast<int>(CLI::ExitCodes::ValidationError);
  }
  return serve(options);
}

/// What `hearth call` is given.
struct CallOptions {
  fs::path path;
  std::string endpoint;
  std::string input;
  std::string service;
  fs::path state_dir;
  int timeout = 30000;
  bool pretty = false;
  bool insecure = false;
  bool lafs = false;
  bool daemon = false;
  bool json = false;
};

/// `hearth call` and its options, read into `options`.
CLI::App* add_call_command(CLI::App& app, CallOptions& options) {
  auto* cmd =
      app.add_subcommand("call", "Call an endpoint in-process (no daemon) and print the result");
  cmd->add_option("path", options.path,
                  "Service folder (or folder of services); with --daemon, the service's name")
      ->required();
  cmd->add_flag("--daemon", options.daemon,
                "Call through the running daemon (found by --state-dir) instead of "
                "in-process: views of the service see the change as an agent action");
  cmd->add_option("endpoint", options.endpoint, "Endpoint id")->required();
  cmd->add_option("input", options.input, "Input as JSON (e.g. '{\"text\":\"milk\"}')");
  cmd->add_option("--service", options.service, "Service name, when PATH holds several");
  cmd->add_option("--state-dir", options.state_dir, "Where the audit log goes");
  cmd->add_option("--default-timeout", options.timeout, "Handler time limit (ms) when none is set")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400000));
  cmd->add_flag("--pretty", options.pretty, "Indent the JSON output");
  cmd->add_flag("--insecure-no-sandbox", options.insecure,
                "Run the handler WITHOUT the jail (permissions not enforced by the OS)");
  cmd->add_flag("--lafs", options.lafs,
                "Print the outcome as a LAFS envelope; exit with the error code's cliExit");
  cmd->add_flag("--json", options.json,
                "On error, print the JSON-RPC error object on stdout (for scripts) instead of "
                "a readable message on stderr");
  cmd->footer(
      "Prints the result as JSON on stdout and exits 0; on error prints the error (on stderr,\n"
      "or with --json the JSON-RPC error object on stdout) and exits 1 (2 when the input or the\n"
      "manifest is invalid).");
  return cmd;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"hearth: a local agent host serving LAVS services over JSON-RPC 2.0", "hearth"};
  app.set_version_flag("--version", std::string("hearth ") + HEARTH_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options (--log-level) may follow the command
  std::string log_level = "info";
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error or off (logs go to stderr)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  // Every option of every command can be set in the configuration file, under the command's
  // section ([serve] port = 5555); the command line wins. Unknown keys are errors.
  auto* config = app.set_config("--config", default_config_file(),
                                "Configuration file (TOML; every option of every command, "
                                "under [COMMAND] sections)");
  config->envname("HEARTH_CONFIG");
  app.allow_config_extras(CLI::config_extras_mode::error);

  ServeOptions serve_options;
  auto* serve_cmd = add_serve_command(app, serve_options);
  CallOptions call_options;
  auto* call_cmd = add_call_command(app, call_options);
  // open
  fs::path open_state_dir;
  bool open_browser = false;
  auto* open_cmd = app.add_subcommand(
      "open", "Print the view host's URL (with the token) of the running daemon");
  open_cmd->add_option("--state-dir", open_state_dir, "The daemon's state dir");
  open_cmd->add_flag("--browser", open_browser, "Also open it with xdg-open");
  open_cmd->footer("Exit status: 0 when a daemon runs (and the browser started), 1 otherwise.");

  // check
  std::vector<fs::path> check_paths;
  bool check_json = false;
  auto* check_cmd =
      app.add_subcommand("check", "Check manifests: list every problem, or summarise the services");
  check_cmd
      ->add_option("paths", check_paths, "Service folders, lavs.json files, or folders of services")
      ->required()
      ->check(CLI::ExistingPath);
  check_cmd->add_flag("--json", check_json, "Print the report as JSON");
  bool check_strict = false;
  check_cmd->add_flag("--strict", check_strict,
                      "Warnings (unknown keys, such as a misspelt fileAccess) are problems too");
  check_cmd->footer(
      "Exit status: 0 when every manifest loads (warnings are printed), 1 otherwise (with "
      "--strict, also when there is a warning).");

  // doctor
  bool doctor_json = false;
  auto* doctor_cmd = app.add_subcommand(
      "doctor",
      "Show which jail mechanisms work on this machine, and what that means for manifests");
  doctor_cmd->add_flag("--json", doctor_json, "Print the report as JSON");
  doctor_cmd->footer("Exit status: 0 when confined endpoints can run here, 1 otherwise.");

  std::function<int()> lafs_run;
  auto* lafs_cmd = add_lafs_command(app, lafs_run);
  std::function<int()> mcp_run;
  auto* mcp_cmd = add_mcp_command(app, mcp_run);
  std::function<int()> registry_run;
  auto* registry_cmd = add_registry_command(app, registry_run);
  std::function<int()> vault_run;
  auto* vault_cmd = add_vault_command(app, vault_run);
  std::function<int()> workspace_run;
  auto* workspace_cmd = add_workspace_command(app, workspace_run);
  std::function<int()> agent_run;
  auto* agent_cmd = add_agent_command(app, agent_run);
  std::function<int()> app_run;
  auto* app_cmd = add_app_command(app, app_run);
  std::function<int()> control_run;
  add_control_commands(app, control_run);
  std::function<int()> config_run;
  add_config_command(app, config_run);
  std::function<int()> completion_run;
  auto* completion_cmd = add_completion_command(app, completion_run);
  std::function<int()> man_run;
  auto* man_cmd = add_man_command(app, std::string("hearth ") + HEARTH_VERSION, man_run);

  // `hearth help serve` is `hearth serve --help`; misspelt commands and options are named, with
  // the closest known one, before CLI11 reads values.
  std::vector<std::string> args = expand_help(std::vector<std::string>(argv, argv + argc));
  if (args.size() == 1) {
    std::cout << app.help();
    return 0;
  }
  if (auto wrong = misspelling(app, args)) {
    std::cerr << *wrong << std::endl;
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  std::vector<char*> words;
  words.reserve(args.size());
  for (auto& a : args) words.push_back(a.data());
  try {
    app.parse(static_cast<int>(words.size()), words.data());
  } catch (const CLI::ConfigError& e) {
    std::cerr << config_error_text(app, config->as<std::string>(), e) << std::endl;
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  setup_logging(log_level);
  set_configured_state_dir(serve_options.state_dir);

  if (*serve_cmd) return serve_something(serve_options);
  if (*call_cmd && call_options.daemon) {
    return call_through_daemon(call_options.path.string(), call_options.endpoint,
                               call_options.input, call_options.state_dir, call_options.pretty,
                               call_options.json);
  }
  if (*call_cmd && !fs::exists(call_options.path)) {
    std::cerr << "path: Path does not exist: " << call_options.path.string() << "\n"
              << "Run with --help for more information." << std::endl;
    return static_cast<int>(CLI::ExitCodes::ValidationError);
  }
  if (*call_cmd) {
    return call(call_options.path, call_options.service, call_options.endpoint, call_options.input,
                call_options.state_dir, call_options.timeout, call_options.pretty,
                call_options.insecure, call_options.lafs, call_options.json);
  }
  if (*open_cmd) return open_page(open_state_dir, open_browser);
  if (*check_cmd) return check(check_paths, check_json, check_strict);
  if (*doctor_cmd) return doctor(doctor_json);
  if (*lafs_cmd) return lafs_run();
  if (*mcp_cmd) return mcp_run();
  if (*registry_cmd && registry_run) return registry_run();
  if (*vault_cmd && vault_run) return vault_run();
  if (*workspace_cmd && workspace_run) return workspace_run();
  if (*agent_cmd && agent_run) return agent_run();
  if (*app_cmd && app_run) return app_run();
  if (control_run) return control_run();
  if (config_run) return config_run();
  if (*completion_cmd) return completion_run();
  if (*man_cmd) return man_run();
  return 2;
}

}  // namespace hearth::cli
