#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <thread>

#include "a2a/a2a.hpp"
#include "a2s/exec/gateway.hpp"
#include "appserver/server.hpp"
#include "appui/appui.hpp"
#include "cli/app_tools.hpp"
#include "cli/common.hpp"
#include "cli/remote.hpp"
#include "common/ascii.hpp"
#include "common/atomic_file.hpp"
#include "common/random.hpp"
#include "httpclient/client.hpp"
#include "httpclient/url.hpp"
#include "jail/jail.hpp"
#include "mcpserver/http.hpp"
#include "mcpserver/server.hpp"
#include "methods/a2s/a2s.hpp"
#include "methods/apps/apps.hpp"
#include "methods/lavs/lavs.hpp"
#include "methods/view/view.hpp"
#include "methods/workspace/workspace.hpp"
#include "net/server.hpp"
#include "proc/process.hpp"
#include "rpc/dispatcher.hpp"
#include "vault/vault.hpp"
#include "views/views.hpp"
#include "workspace/manager.hpp"

namespace hearth::cli {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

/// Writes `content` to `file` with mode 0600, atomically (common/atomic_file: a temporary file
/// beside it, fsynced, renamed over it), so that a reader never sees half a token or ready file.
bool write_private_file(const fs::path& file, const std::string& content, std::string& error) {
  auto written = write_file_atomic(file, content, {.mode = 0600});
  if (!written.ok()) {
    error = written.error().message;
    return false;
  }
  return true;
}

/// Raises the soft file limit to the hard one (connections and handlers' pipes are files) and
/// returns the soft limit in force.
std::size_t raise_file_limit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20
                                         : static_cast<std::size_t>(limit.rlim_cur);
}

/// Connections get three quarters of the descriptors; the rest is for handler processes' pipes,
/// files and the jail's sockets.
std::size_t default_max_connections(std::size_t file_limit) {
  return std::clamp<std::size_t>(file_limit / 4 * 3, 64, 65536);
}

/// The lavs/servicesChanged notification of a reload.
std::string services_changed(const host::ReloadReport& report) {
  auto names = [](const std::vector<std::string>& list) {
    json::array out;
    for (const auto& name : list) out.push_back(json::value(name));
    return out;
  };
  json::object params;
  params["added"] = names(report.added);
  params["changed"] = names(report.changed);
  params["removed"] = names(report.removed);
  return json::dump(rpc::make_notification("lavs/servicesChanged", std::move(params)));
}

void log_reload(const host::ReloadReport& report) {
  for (const auto& failure : report.problems.failures) {
    for (const auto& problem : failure.problems) {
      spdlog::error("{}: {} (not reloaded: what was served stays served)", failure.file.string(),
                    problem.to_string());
    }
  }
  for (const auto& warning : report.problems.warnings) spdlog::warn("{}", warning);
  auto join = [](const std::vector<std::string>& list) {
    std::string out;
    for (const auto& name : list) out += (out.empty() ? "" : ", ") + name;
    return out.empty() ? std::string("-") : out;
  };
  if (report.any_change()) {
    spdlog::info("services reloaded: added {}; changed {}; removed {}", join(report.added),
                 join(report.changed), join(report.removed));
  }
}

}  // namespace

asio::awaitable<void> watch_services(host::Host& host, std::vector<fs::path> paths,
                                     std::chrono::milliseconds interval, asio::steady_timer& timer,
                                     std::function<void(const host::ReloadReport&)> on_change) {
  for (;;) {
    timer.expires_after(interval);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    std::function<host::ReloadReport()> work = [&host, &paths] { return host.reload(paths); };
    auto report = co_await host.blocking().run(std::move(work));
    log_reload(report);
    if (report.any_change()) on_change(report);
  }
}

std::vector<std::string> changed_services(const host::ReloadReport& report) {
  std::vector<std::string> what = report.added;
  what.insert(what.end(), report.changed.begin(), report.changed.end());
  what.insert(what.end(), report.removed.begin(), report.removed.end());
  return what;
}

std::shared_ptr<const jail::Jail> open_jail(bool insecure_no_sandbox) {
  jail::JailOptions jail_options;
  jail_options.launcher = proc::launcher();
  jail_options.insecure_no_sandbox = insecure_no_sandbox;
  auto jail = jail::Jail::create(jail_options);
  if (!jail.ok()) {
    spdlog::error("jail: {}", jail.error().message);
    return nullptr;
  }
  if (insecure_no_sandbox) {
    spdlog::warn(
        "*** --insecure-no-sandbox: handler processes run WITHOUT the jail. fileAccess, "
        "networkAccess and maxMemory are NOT enforced by the operating system. ***");
  } else {
    for (const auto& m : jail.value().capabilities().mechanisms) {
      if (!m.ok) spdlog::warn("jail: {} is not available: {}", m.name, m.detail);
    }
  }
  return std::make_shared<const jail::Jail>(std::move(jail).value());
}

void stop_when_children_gone(asio::io_context& ioc, asio::steady_timer& timer,
                             std::chrono::steady_clock::time_point deadline) {
  if (proc::running_count() == 0 || std::chrono::steady_clock::now() >= deadline) {
    ioc.stop();
    return;
  }
  timer.expires_after(std::chrono::milliseconds(20));
  timer.async_wait([&ioc, &timer, deadline](const boost::system::error_code& ec) {
    if (!ec) stop_when_children_gone(ioc, timer, deadline);
  });
}

namespace {

/// The model servers of --model-url (named "default", first) and --model-server, with the keys
/// of --model-key and --model-server-key bound to them.
Status configure_model_servers(const ServeOptions& options, agent::ModelServers& servers) {
  const auto tools = agent::parse_tool_mode(options.model_tools);
  if (!tools) {
    return Error::make(ErrorCode::kInvalidParams, "--model-tools is auto, native or prompt, not '" +
                                                      options.model_tools + "'");
  }
  if (!options.model_url.empty()) {
    HEARTH_RETURN_IF_ERROR(servers.add({.name = "default",
                                        .base_url = options.model_url,
                                        .model = options.model,
                                        .key_ref = options.model_key_ref,
                                        .stream = options.model_stream,
                                        .tools = *tools}));
  } else if (!options.model_key_ref.empty()) {
    return Error::make(ErrorCode::kInvalidParams,
                       "--model-key is the key of --model-url's server: give --model-url too");
  }
  for (const auto& spec : options.model_servers) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error::make(ErrorCode::kInvalidParams,
                         "--model-server is NAME=URL, not '" + spec + "'");
    }
    HEARTH_RETURN_IF_ERROR(servers.add({.name = spec.substr(0, eq),
                                        .base_url = spec.substr(eq + 1),
                                        .model = options.model,
                                        .key_ref = {},  // bound by --model-server-key
                                        .stream = options.model_stream,
                                        .tools = *tools}));
  }
  for (const auto& spec : options.model_server_keys) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error::make(ErrorCode::kInvalidParams,
                         "--model-server-key is NAME=SCOPE::NAME, not '" + spec + "'");
    }
    HEARTH_RETURN_IF_ERROR(servers.set_key(spec.substr(0, eq), spec.substr(eq + 1)));
  }
  return {};
}

}  // namespace

int serve(const ServeOptions& options) {
  // Children's pipes may close under us; a write to them must be an error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file size limit a write must fail (EFBIG, reported), not kill the daemon.
  std::signal(SIGXFSZ, SIG_IGN);

  std::string error;
  fs::path state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
  if (!ensure_private_dir(state_dir, error)) {
    spdlog::error("state dir: {}", error);
    return 1;
  }
  fs::path token_file = options.token_file.empty() ? state_dir / "token" : options.token_file;

  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
  asio::io_context ioc(static_cast<int>(threads));

  // The jail: probe the machine once; every handler process goes through it.
  auto jail = open_jail(options.insecure_no_sandbox);
  if (!jail) return 1;

  // A2S: the vault under the state dir, the registry folders, and their HTTP client. The vault's
  // key is read (made when there is none) and checked now, so a key file of the wrong mode or
  // form, or a malformed $HEARTH_VAULT_KEY, stops the start; the vault itself is opened at its
  // first use (a key that does not match it is reported to the call that needs a variable).
  if (auto key = vault::MasterKey::open(state_dir / "vault.key"); !key.ok()) {
    spdlog::error("{}", key.error().message);
    return 1;
  }
  auto vault = open_vault_on_first_use(state_dir);
  auto a2s_client = std::make_shared<httpclient::Client>(ioc.get_executor());
  a2s::GatewayOptions gateway_options;
  gateway_options.registry_dirs = options.registry_dirs;
  gateway_options.local_domains = options.local_domains;
  gateway_options.timeout = std::chrono::milliseconds(options.registry_timeout_ms);
  auto gateway =
      std::make_shared<a2s::Gateway>(ioc.get_executor(), gateway_options, vault, a2s_client);
  gateway->load();
  {
    const auto snap = gateway->snapshot();
    for (const auto& failure : snap->failures) {
      for (const auto& problem : failure.problems) {
        spdlog::error("registry: {}: {}", failure.file.string(), problem.to_string());
      }
    }
    if (!options.registry_dirs.empty()) {
      spdlog::info("registry: {} services, {} files refused", snap->definitions.size(),
                   snap->failures.size());
    }
  }

  host::HostOptions host_options;
  host_options.kinds.a2s = gateway;
  host_options.allow_no_services =
      options.paths.empty() && (!options.registry_dirs.empty() || !options.workspace_dirs.empty());
  host_options.default_timeout = std::chrono::milliseconds(options.default_timeout_ms);
  host_options.kinds.jail = jail;
  host_options.kinds.js_workers = static_cast<std::size_t>(options.js_workers);
  host::LoadReport report;
  auto host = host::Host::load(options.paths, host_options, ioc.get_executor(), report);
  print_load_report(report);
  if (!host) return 1;

  host::AuditLog audit;
  if (auto st = audit.open(state_dir / "audit.log"); !st.ok()) {
    spdlog::error("{}", st.error().message);
    return 1;
  }
  host->set_audit(&audit);
  gateway->set_audit([&audit](const a2s::AuditEntry& entry) {
    host::AuditRecord record;
    record.service = entry.service;
    record.endpoint = entry.capability;
    record.method = entry.action;
    record.transport = "daemon";
    record.outcome = entry.outcome;
    record.detail = entry.detail;
    audit.record(record);
  });
  vault->set_read_observer([&audit](const vault::GlobalRead& read) {
    host::AuditRecord record;
    record.service = read.domain;
    record.endpoint = "global::" + read.name;
    record.method = "vault/read";
    record.transport = "daemon";
    record.outcome = read.granted ? "ok" : "refused";
    audit.record(record);
  });

  views::Options view_options;
  view_options.web_dir = options.web_dir.empty() ? views::default_web_dir() : options.web_dir;
  view_options.state_dir = state_dir;
  for (const auto& origin : options.view_origins) {
    auto parsed = httpclient::parse_url(origin);
    if (!parsed.ok() || (parsed.value().target != "/" && !parsed.value().target.empty())) {
      spdlog::error("--allow-view-origin '{}': not an origin (https://host[:port])", origin);
      return 1;
    }
    view_options.cdn_origins.push_back(parsed.value().origin());
  }
  views::ViewHost view_host(*host, view_options);
  host->set_mutation_listener(
      {[&view_host](std::string_view service) { return view_host.watched(service); },
       [&view_host](const host::Mutation& m) { view_host.publish(m); }});
  net::Routes routes;
  if (auto st = view_host.add_routes(routes); !st.ok()) {
    spdlog::error("routes: {}", st.error().message);
    return 1;
  }
  // Virtual workspaces (their side effects and sources reach the services through the host),
  // served before the MCP server, which offers them too.
  methods::workspace::HostServices workspace_services(*host);
  workspace::ManagerOptions workspace_options;
  workspace_options.database = state_dir / "workspaces.db";
  workspace_options.jail = host_options.kinds.jail;
  auto workspaces = workspace::Manager::create(ioc.get_executor(), workspace_options,
                                               host->blocking(), &workspace_services);
  if (!workspaces.ok()) {
    spdlog::error("workspaces: {}", workspaces.error().message);
    return 1;
  }
  // hearth as an MCP server: /mcp (Streamable HTTP), the same tools and resources as
  // `hearth mcp serve` over stdio.
  mcpserver::Options mcp_options;
  mcp_options.version = HEARTH_VERSION;
  mcp_options.cdn_origins = view_options.cdn_origins;
  mcp_options.progress_interval = std::chrono::milliseconds(options.mcp_progress_interval_ms);
  mcp_options.workspaces = workspaces.value().get();
  mcpserver::Server mcp_server(*host, ioc.get_executor(), mcp_options);
  auto mcp_http = mcpserver::add_http_route(routes, mcp_server);
  if (!mcp_http.ok()) {
    spdlog::error("routes: {}", mcp_http.error().message);
    return 1;
  }
  // hearth as an A2A agent: the Agent Card and /a2a (the URL is known once listening).
  std::string base_url;
  a2a::Options a2a_options;
  a2a_options.version = HEARTH_VERSION;
  a2a_options.base_url = [&base_url] { return base_url; };
  auto a2a_agent = a2a::add_routes(routes, *host, ioc.get_executor(), a2a_options);
  if (!a2a_agent.ok()) {
    spdlog::error("routes: {}", a2a_agent.error().message);
    return 1;
  }
  if (!fs::is_regular_file(view_options.web_dir / "index.html")) {
    spdlog::warn("the host page's files are not in {} (set --web-dir): /ui/ answers 404",
                 view_options.web_dir.string());
  }

  // Agent runs against the configured model servers.
  BlockingExecutor transcript_writer(1);
  methods::workspace::AgentSettings agent_settings;
  if (auto st = configure_model_servers(options, agent_settings.servers); !st.ok()) {
    spdlog::error("{}", st.error().message);
    return 2;
  }
  agent_settings.read_key = [vault, &audit](const std::string& ref,
                                            const std::string& domain) -> Result<std::string> {
    auto variable = methods::a2s::split_variable(ref);
    if (!variable) {
      return Error::make(ErrorCode::kInvalidParams,
                         "a key reference is SCOPE::NAME (a vault variable), not '" + ref + "'");
    }
    // The vault's rule for A2S holds for model keys a run names: a domain's variable goes to
    // that domain only, a global one where a trust grant sends it. A configured server's own
    // key (domain empty) was bound to it by the operator.
    Result<std::optional<vault::Secret>> secret = std::optional<vault::Secret>();
    if (!domain.empty() && variable->first == vault::kGlobal) {
      secret = vault->get_global_for(domain, variable->second);
    } else if (domain.empty() || ascii::iequals(variable->first, domain)) {
      secret = vault->get(variable->first, variable->second);
    } else {
      secret = Error::make(
          ErrorCode::kPermissionDenied,
          "the vault keeps " + ref + " for " + variable->first + ": it is not sent to " + domain +
              " (a model key goes to the server it belongs to; configure the server on the "
              "daemon with its key, --model-server-key)",
          json::object{{"reason", "key-scope"}, {"variable", ref}, {"domain", domain}});
    }
    // Every read of a model key is recorded (the value never is).
    host::AuditRecord record;
    record.service = variable->first;
    record.endpoint = ref;
    record.method = "agent/modelKey";
    record.transport = "daemon";
    record.client = domain;
    record.outcome = !secret.ok() ? "error" : secret.value() ? "ok" : "absent";
    audit.record(record);
    if (!secret.ok()) return secret.error();
    if (!secret.value()) {
      return Error::make(ErrorCode::kInvalidParams,
                         "the vault has no " + ref + ": set it with hearth vault set");
    }
    return secret.value()->value;
  };
  agent_settings.context.max_chars = options.model_context_chars;
  agent_settings.transcripts = state_dir / "agent";
  agent_settings.writer = &transcript_writer;
  methods::workspace::Runs agent_runs;

  rpc::Dispatcher dispatcher;
  rpc::Dispatcher app_server_dispatcher;  // /app-server and /app-server/ws
  methods::lavs::add_methods(dispatcher, *host);
  methods::workspace::add_methods(dispatcher, *workspaces.value(), agent_settings, agent_runs);
  methods::view::add_methods(dispatcher, *host, view_host);
  methods::a2s::add_methods(dispatcher, *gateway);
  // Agent Apps: the installed apps of the state dir and their capability bridge. A store that
  // cannot be opened leaves the rest served; capability/* then answer with the reason.
  auto app_store = agentapp::AppStore::open(state_dir);
  std::unique_ptr<agentapp::Bridge> app_bridge;
  std::shared_ptr<agentapp::Backends> app_backends;
  std::unique_ptr<appserver::AppServer> app_server;
  std::unique_ptr<appui::AppUiHost> app_ui;
  BlockingExecutor app_calls(2);
  if (app_store.ok()) {
    app_store.value()->set_readiness_context(app_readiness(state_dir));
    app_bridge = std::make_unique<agentapp::Bridge>(*app_store.value());
    // The enabled apps' backends, under the jail (none with --insecure-no-sandbox: an app's
    // code is never run unconfined).
    agentapp::BackendOptions backend_options;
    if (!jail->insecure()) backend_options.jail = jail;
    app_backends = agentapp::Backends::create(ioc.get_executor(), *app_store.value(), *app_bridge,
                                              app_calls, std::move(backend_options));
    methods::apps::add_methods(dispatcher, *app_bridge, *app_backends, app_calls);
    // The apps' page entries, mounted by the view host (Host Bridge v1).
    app_ui = std::make_unique<appui::AppUiHost>(*app_store.value(), *app_bridge, app_calls);
    if (auto st = app_ui->add_routes(routes); !st.ok()) {
      spdlog::error("app UIs are not served: {}", st.error().message);
    }
    app_ui->add_methods(dispatcher);
    // The App Server: in-app agent tasks (agentSession/*) with the daemon's model.
    auto sessions = appserver::Store::open(state_dir / "apps" / "app-server.db");
    if (sessions.ok()) {
      appserver::Options app_server_options;
      // The default model server, with its own key.
      if (auto model = agent_settings.servers.resolve({}, agent_settings.limits); model.ok()) {
        app_server_options.model = model->config;
        if (!model->key_ref.empty()) {
          app_server_options.model_key = [&agent_settings, ref = model->key_ref] {
            return agent_settings.read_key(ref, "");
          };
        }
      }
      app_server_options.context = agent_settings.context;
      app_server_options.resolve_tool = app_tool_resolver(*host, *gateway, *workspaces.value());
      app_server_options.backend_tools = app_backend_tools(app_backends);
      app_server = std::make_unique<appserver::AppServer>(ioc.get_executor(), *app_store.value(),
                                                          *app_bridge, std::move(sessions).value(),
                                                          std::move(app_server_options));
      app_server->add_methods(dispatcher);
      app_server->add_methods(app_server_dispatcher, /*own_endpoint=*/true);
    } else {
      spdlog::error("the App Server is not served: {}", sessions.error().message);
    }
  } else {
    spdlog::error("agent apps are not served: {}", app_store.error().message);
    methods::apps::add_unavailable(dispatcher, app_store.error().message);
  }
  name_lafs_operations(dispatcher, *host);

  net::ServerOptions server_options;
  server_options.address = options.address;
  server_options.port = static_cast<std::uint16_t>(options.port);
  server_options.token = random_hex(32);
  server_options.allowed_origins = options.allowed_origins;
  server_options.max_request_bytes = options.max_request_bytes;
  server_options.idle_timeout = std::chrono::seconds(options.idle_timeout_s);
  const std::size_t file_limit = raise_file_limit();
  server_options.max_connections =
      options.max_connections > 0 ? options.max_connections : default_max_connections(file_limit);
  if (server_options.max_connections > file_limit) {
    spdlog::warn("--max-connections {} is above the file limit {}: connections beyond it will fail",
                 server_options.max_connections, file_limit);
  }
  server_options.max_websockets = options.max_websockets;
  server_options.header_timeout = std::chrono::milliseconds(options.header_timeout_ms);
  if (app_server) {
    server_options.rpc_services.push_back(
        {"/app-server", "/app-server/ws", &app_server_dispatcher});
  }
  net::Server server(ioc, server_options, dispatcher, std::move(routes));
  auto port = server.listen();
  if (!port.ok()) {
    spdlog::error("cannot listen on {}:{}: {}", options.address, options.port,
                  port.error().message);
    return 1;
  }
  if (options.address != "127.0.0.1" && options.address != "::1" &&
      options.address != "localhost") {
    spdlog::warn("listening on {}: reachable from other machines (the token is still required)",
                 options.address);
  }

  if (!write_private_file(token_file, server_options.token + "\n", error)) {
    spdlog::error("token file: {}", error);
    return 1;
  }
  std::string host_part = options.address.find(':') != std::string::npos
                              ? "[" + options.address + "]"
                              : options.address;
  std::string url = "http://" + host_part + ":" + std::to_string(*port);
  base_url = url;
  json::object ready;
  ready["url"] = url;
  ready["rpcUrl"] = url + "/rpc";
  ready["wsUrl"] = "ws://" + host_part + ":" + std::to_string(*port) + "/ws";
  ready["port"] = *port;
  ready["tokenFile"] = fs::absolute(token_file).string();
  ready["auditLog"] = audit.path().string();
  ready["uiUrl"] = url + "/ui/";
  ready["mcpUrl"] = url + "/mcp";
  ready["a2aUrl"] = url + "/a2a";
  ready["agentCardUrl"] = url + "/.well-known/agent-card.json";
  ready["registry"] = json::object{{"services", gateway->snapshot()->definitions.size()},
                                   {"refused", gateway->snapshot()->failures.size()}};
  ready["pid"] = ::getpid();
  json::array names;
  for (const auto& s : *host->services()) names.push_back(json::value(s->manifest.name));
  ready["services"] = std::move(names);
  server.start();

  // Graceful shutdown: stop accepting, close connections and subscriptions, kill children.
  // Then wait (bounded) until every child has been reaped, so nothing is left behind.
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  asio::steady_timer poll(ioc);
  asio::steady_timer ready_poll(ioc);
  asio::steady_timer watch_timer(ioc);
  auto stop_at = std::chrono::steady_clock::time_point::max();
  int exit_code = 0;
  auto begin_shutdown = [&] {
    if (stop_at != std::chrono::steady_clock::time_point::max()) return;
    ready_poll.cancel();
    watch_timer.cancel();
    agent_runs.cancel_all();
    workspaces.value()->shutdown();
    gateway->stop();
    a2s_client->shutdown();
    server.stop();
    mcp_server.close_all();
    host->shutdown();
    if (app_backends) app_backends->stop(false);
    if (app_server) app_server->stop();
    proc::kill_all();
    stop_at = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    stop_when_children_gone(ioc, poll, stop_at);
  };
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    begin_shutdown();
  });

  // The daemon says it is ready (ready file, banner) once its warm JS workers can answer, so a
  // first call does not wait for a worker to start; a pool that cannot start does not hold it.
  const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::atomic<bool> workspaces_open{options.workspace_dirs.empty()};
  std::function<void()> announce = [&] {
    if (stop_at != std::chrono::steady_clock::time_point::max()) return;
    if (!workspaces_open.load() ||
        (!host->ready() && std::chrono::steady_clock::now() < ready_by)) {
      ready_poll.expires_after(std::chrono::milliseconds(5));
      ready_poll.async_wait([&](const boost::system::error_code& ec) {
        if (!ec) announce();
      });
      return;
    }
    if (!host->ready()) spdlog::warn("JavaScript workers are still starting after 20 s");
    // Where `hearth open` and `hearth call --daemon` find this daemon (the token stays in its
    // own file). Written before the ready file: whoever waits for that one finds it.
    const fs::path daemon_file = state_dir / "daemon.json";
    if (!write_private_file(daemon_file, json::dump(ready) + "\n", error)) {
      spdlog::warn("{}: {}", daemon_file.string(), error);
    }
    if (!options.ready_file.empty() &&
        !write_private_file(options.ready_file, json::dump(ready) + "\n", error)) {
      spdlog::error("ready file: {}", error);
      exit_code = 1;
      begin_shutdown();
      return;
    }
    if (options.json) {
      std::cout << json::dump(ready) << std::endl;
    } else {
      std::cout << "hearth " << HEARTH_VERSION << " serving " << host->services()->size()
                << " service(s) on " << url << "\n"
                << "  JSON-RPC: POST " << url
                << "/rpc   WebSocket: " << ready["wsUrl"].as_string().c_str()
                << "\n  token file: " << fs::absolute(token_file).string() << "\n  services:";
      for (const auto& s : *host->services()) std::cout << " " << s->manifest.name;
      std::cout << "\n  open the view host: " << url << "/ui/#token=" << server_options.token
                << std::endl;
    }
    if (options.open) {
      // xdg-open may wait for the browser: never on an I/O thread.
      std::thread([page = url + "/ui/#token=" + server_options.token] {
        if (!launch_browser(page)) spdlog::warn("--open: xdg-open could not open a browser");
      }).detach();
    }
  };
  if (!options.workspace_dirs.empty()) {
    // Opened before the daemon says it is ready: a workspace with a problem stops it, as a
    // service with one does (nothing is half served).
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
          json::array workspace_names;
          for (const auto& dir : options.workspace_dirs) {
            auto ws = co_await workspaces.value()->open(dir);
            if (!ws.ok()) {
              spdlog::error("{}", ws.error().message);
              exit_code = 1;
              begin_shutdown();
              co_return;
            }
            for (const auto& note : ws.value()->notes()) {
              spdlog::warn("workspace {}: {}", ws.value()->name(), note);
            }
            workspace_names.push_back(json::string(ws.value()->name()));
          }
          ready["workspaces"] = std::move(workspace_names);
          workspaces_open = true;
        },
        asio::detached);
  }
  asio::post(ioc, announce);
  if (app_backends) app_backends->start();
  if (!options.registry_dirs.empty()) gateway->start_watching(std::chrono::milliseconds(1000));
  if (options.watch) {
    asio::co_spawn(ioc,
                   watch_services(*host, options.paths,
                                  std::chrono::milliseconds(options.watch_interval_ms), watch_timer,
                                  [&server, &mcp_server](const host::ReloadReport& reload) {
                                    // WebSocket clients get lavs/servicesChanged, MCP sessions
                                    // list_changed.
                                    server.broadcast(services_changed(reload));
                                    mcp_server.services_changed(changed_services(reload));
                                  }),
                   asio::detached);
  }

  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();

  proc::kill_all();  // anything started while stopping
  std::error_code ec;
  fs::remove(token_file, ec);
  fs::remove(state_dir / "daemon.json", ec);
  if (!options.ready_file.empty()) fs::remove(options.ready_file, ec);
  spdlog::info("stopped");
  return exit_code;
}

}  // namespace hearth::cli
