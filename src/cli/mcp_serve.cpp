// `hearth mcp serve PATH...`: the services under PATH as an MCP server over stdio (one JSON-RPC
// message per line on stdin and stdout; logs on stderr), for MCP clients that start their
// servers. The protocol is src/mcpserver's, the same as /mcp on the daemon.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <csignal>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "cli/common.hpp"
#include "common/fd.hpp"
#include "host/host.hpp"
#include "jail/jail.hpp"
#include "mcpserver/server.hpp"
#include "methods/workspace/workspace.hpp"
#include "proc/process.hpp"
#include "rpc/dispatcher.hpp"
#include "workspace/manager.hpp"

namespace hearth::cli {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

/// Writes whole lines to stdout, one message at a time.
class StdoutWriter {
 public:
  void write(const std::string& message) {
    std::lock_guard lock(mu_);
    std::string line = message + "\n";
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client is gone: stdin's end stops us
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  std::mutex mu_;
};

asio::awaitable<void> handle_line(mcpserver::Server& server,
                                  std::shared_ptr<mcpserver::Session> session, std::string line,
                                  StdoutWriter& out) {
  auto parsed = json::parse_text(line);
  if (!parsed.ok()) {
    out.write(json::dump(rpc::make_error_response(
        nullptr, Error::make(ErrorCode::kParseError, "Parse error: " + parsed.error().message))));
    co_return;
  }
  auto answer = co_await server.handle(session, std::move(parsed).value());
  if (answer) out.write(json::dump(*answer));
}

/// A message longer than this ends the session (after a parse error saying why).
constexpr std::size_t kMaxLine = std::size_t{64} << 20;

/// Reads newline-terminated messages from `in` until its end or an error.
asio::awaitable<void> read_lines(asio::posix::stream_descriptor& in,
                                 std::function<void(std::string)> on_line, StdoutWriter& out) {
  std::string buffer;
  for (;;) {
    auto [ec, n] = co_await asio::async_read_until(in, asio::dynamic_buffer(buffer, kMaxLine), '\n',
                                                   asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::not_found) {
      out.write(json::dump(rpc::make_error_response(
          nullptr, Error::make(ErrorCode::kParseError,
                               "Parse error: a message is longer than 64 MiB; closing"))));
      co_return;
    }
    if (ec) {
      // The end of stdin: a last line without its newline still counts.
      if (!buffer.empty()) on_line(std::move(buffer));
      co_return;
    }
    std::string line = buffer.substr(0, n - 1);
    buffer.erase(0, n);
    on_line(std::move(line));
  }
}

}  // namespace

struct McpServeOptions {
  std::vector<fs::path> paths;
  std::vector<fs::path> workspace_dirs;  ///< virtual workspaces offered too (--workspace)
  fs::path state_dir;
  bool insecure_no_sandbox = false;
  int watch_interval_ms = 1000;
  bool no_watch = false;
  int progress_interval_ms = 1000;
};

int mcp_serve(const McpServeOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  asio::io_context ioc(2);

  auto jail = open_jail(options.insecure_no_sandbox);
  if (!jail) return 1;
  host::HostOptions host_options;
  host_options.kinds.jail = jail;
  // Workspaces alone are something to serve.
  host_options.allow_no_services = options.paths.empty() && !options.workspace_dirs.empty();
  host::LoadReport report;
  auto host = host::Host::load(options.paths, host_options, ioc.get_executor(), report);
  print_load_report(report);
  if (!host) return 1;

  host::AuditLog audit;
  std::string error;
  const fs::path state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
  if (ensure_private_dir(state_dir, error)) {
    if (auto st = audit.open(state_dir / "audit.log"); st.ok()) host->set_audit(&audit);
  } else {
    spdlog::warn("state dir: {} (calls are not audited)", error);
  }

  // Virtual workspaces: a resource and two tools each (their side effects and sources reach the
  // services through the host), state and history in the state dir as for the daemon.
  methods::workspace::HostServices workspace_services(*host);
  std::unique_ptr<workspace::Manager> workspaces;
  if (!options.workspace_dirs.empty()) {
    workspace::ManagerOptions workspace_options;
    workspace_options.database = state_dir / "workspaces.db";
    workspace_options.jail = host_options.kinds.jail;
    auto made = workspace::Manager::create(ioc.get_executor(), workspace_options, host->blocking(),
                                           &workspace_services);
    if (!made.ok()) {
      spdlog::error("workspaces: {}", made.error().message);
      return 1;
    }
    workspaces = std::move(made).value();
  }

  mcpserver::Options server_options;
  server_options.version = HEARTH_VERSION;
  server_options.progress_interval = std::chrono::milliseconds(options.progress_interval_ms);
  server_options.workspaces = workspaces.get();
  mcpserver::Server server(*host, ioc.get_executor(), server_options);
  StdoutWriter out;
  auto session = server.open("stdio", [&out](const std::string& message) { out.write(message); });

  auto guard = asio::make_work_guard(ioc);
  auto stdin_strand = asio::make_strand(ioc);
  asio::posix::stream_descriptor in(stdin_strand);
  asio::steady_timer watch_timer(ioc);
  asio::steady_timer poll(ioc);
  std::atomic<bool> stopping{false};
  std::function<void()> begin_shutdown = [&] {
    if (stopping.exchange(true)) return;
    watch_timer.cancel();
    asio::post(stdin_strand, [&in] {
      boost::system::error_code ignored;
      in.close(ignored);
    });
    server.close_all();
    if (workspaces) workspaces->shutdown();
    host->shutdown();
    proc::kill_all();
    guard.reset();
    stop_when_children_gone(ioc, poll, std::chrono::steady_clock::now() + std::chrono::seconds(3));
  };
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) begin_shutdown();
  });
  if (!options.no_watch) {
    asio::co_spawn(ioc,
                   watch_services(*host, options.paths,
                                  std::chrono::milliseconds(options.watch_interval_ms), watch_timer,
                                  [&server](const host::ReloadReport& reload) {
                                    server.services_changed(changed_services(reload));
                                  }),
                   asio::detached);
  }

  // stdin: each line is handled on the io_context as it arrives (calls run concurrently, so a
  // cancel can reach one in flight); its end ends the server. A pipe, socket or terminal is read
  // asynchronously; a regular file (which epoll cannot watch) on a thread, to its end.
  auto on_line = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    asio::co_spawn(ioc, handle_line(server, session, std::move(line), out), asio::detached);
  };
  std::thread reader;
  // stdin is read once the workspaces are open, so that the first tools/list has them.
  auto start_reading = [&] {
    boost::system::error_code assign_ec;
    Fd stdin_copy(::dup(STDIN_FILENO));
    in.assign(stdin_copy.get(), assign_ec);
    if (!assign_ec) {
      stdin_copy.release();  // the stream descriptor owns it now
      asio::co_spawn(stdin_strand, read_lines(in, on_line, out),
                     [&](const std::exception_ptr&) { begin_shutdown(); });
    } else {
      reader = std::thread([&] {
        std::string line;
        while (std::getline(std::cin, line)) {
          asio::post(ioc, [&on_line, line]() mutable { on_line(std::move(line)); });
        }
        asio::post(ioc, [&] { begin_shutdown(); });
      });
    }
  };
  int exit_code = 0;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        for (const auto& dir : options.workspace_dirs) {
          auto ws = co_await workspaces->open(dir);
          if (!ws.ok()) {
            spdlog::error("workspace {}: {}", dir.string(), ws.error().message);
            exit_code = 1;
            begin_shutdown();
            co_return;
          }
        }
        start_reading();
      },
      asio::detached);
  spdlog::info("hearth MCP server on stdio: {} service(s), {} workspace(s)",
               host->services()->size(), options.workspace_dirs.size());

  std::thread second([&] { ioc.run(); });
  ioc.run();
  second.join();
  if (reader.joinable()) reader.join();
  proc::kill_all();
  return exit_code;
}

void add_mcp_serve_command(CLI::App& mcp_cmd, std::function<bool()>& chosen,
                           std::function<int()>& run) {
  auto options = std::make_shared<McpServeOptions>();
  auto* cmd = mcp_cmd.add_subcommand(
      "serve",
      "Serve the services under PATH as an MCP server over stdio: every query and mutation "
      "endpoint a tool, files, views and subscriptions resources");
  cmd->add_option("paths", options->paths, "Service folders (or folders holding them)")
      ->check(CLI::ExistingPath);
  cmd->add_option("--workspace", options->workspace_dirs,
                  "A virtual workspace folder (holding workspace.yaml) to offer as a resource "
                  "and the execute_script and read_workspace tools; repeatable")
      ->allow_extra_args(false)
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--state-dir", options->state_dir, "Where the audit log is kept");
  cmd->add_flag("--insecure-no-sandbox", options->insecure_no_sandbox,
                "Run handlers WITHOUT the jail");
  cmd->add_flag("--no-watch", options->no_watch,
                "Do not reload edited manifests (tools/list_changed)");
  cmd->add_option("--watch-interval", options->watch_interval_ms,
                  "How often (ms) manifests are checked for changes")
      ->capture_default_str()
      ->check(CLI::Range(50, 3600000));
  cmd->add_option("--progress-interval", options->progress_interval_ms,
                  "How often (ms) a running tool call reports progress, when asked")
      ->capture_default_str()
      ->check(CLI::Range(10, 600000));
  cmd->footer(
      "One JSON-RPC message per line on stdin and stdout; logs go to stderr. The daemon serves\n"
      "the same protocol over Streamable HTTP at /mcp (hearth serve). See docs/mcp-server.md.");
  chosen = [cmd] { return static_cast<bool>(*cmd); };
  run = [options] {
    if (options->paths.empty() && options->workspace_dirs.empty()) {
      std::cerr << "hearth mcp serve: give service folders, --workspace folders, or both\n";
      return 2;
    }
    return mcp_serve(*options);
  };
}

}  // namespace hearth::cli
