#include "handlers/mcp/server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/on_strand.hpp"
#include "confine/confine.hpp"
#include "egress/network_policy.hpp"
#include "handlers/script/program.hpp"
#include "mcp/http_transport.hpp"
#include "mcp/stdio_transport.hpp"

namespace hearth::handlers::mcp {

using confine::base_environment;
using confine::Environment;
using confine::environment_entries;

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& base) {
  const auto relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

Server::Server(const asio::any_io_executor& executor, ServerSpec spec,
               std::shared_ptr<httpclient::Client> http)
    : executor_(executor),
      strand_(asio::make_strand(executor)),
      spec_(std::move(spec)),
      http_(std::move(http)),
      started_(strand_) {}

Server::~Server() {
  stop();
}

int Server::starts() const {
  return starts_;
}

void Server::stop() {
  stopped_ = true;
  std::shared_ptr<hearth::mcp::Session> session;
  {
    std::lock_guard lock(mutex_);
    session = std::move(session_);
  }
  if (session) session->close();
}

asio::awaitable<Result<std::shared_ptr<hearth::mcp::Session>>> Server::session(
    std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  co_return co_await hearth::on(strand_, self->session_on_strand(timeout));
}

asio::awaitable<Result<std::shared_ptr<hearth::mcp::Session>>> Server::session_on_strand(
    std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  for (;;) {
    if (stopped_) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    {
      std::lock_guard lock(mutex_);
      if (session_ && session_->alive()) co_return session_;
    }
    if (!starting_) break;
    // Another call is starting the server: wait for it, then look again.
    co_await started_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  starting_ = true;
  started_.expires_at(asio::steady_timer::time_point::max());
  std::shared_ptr<hearth::mcp::Session> old;
  {
    std::lock_guard lock(mutex_);
    old = std::move(session_);
  }
  if (old) {
    old->close();
    spdlog::info("{} of service '{}' ended; starting it again", label(), spec_.service);
  }

  Result<std::shared_ptr<hearth::mcp::Session>> outcome =
      Error::make(ErrorCode::kHandlerError, label() + " did not start");
  auto transport = make_transport();
  if (!transport.ok()) {
    outcome = std::move(transport).error();
  } else {
    auto session =
        hearth::mcp::Session::create(executor_, std::move(transport).value(), spec_.config.name);
    auto started = co_await session->start(timeout);
    if (!started.ok()) {
      Error e = std::move(started).error();
      if (e.code != ErrorCode::kPermissionDenied) {
        e.message = label() + " did not start: " + e.message;
      }
      outcome = std::move(e);
    } else if (stopped_) {
      session->close();
      outcome = Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    } else {
      ++starts_;
      spdlog::debug("{} of service '{}' started (MCP {})", label(), spec_.service,
                    session->protocol_version());
      std::lock_guard lock(mutex_);
      session_ = session;
      outcome = session;
    }
  }
  starting_ = false;
  started_.cancel();
  co_return outcome;
}

Result<std::unique_ptr<hearth::mcp::Transport>> Server::make_transport() {
  const std::string who = label();
  if (const auto* http = std::get_if<hearth::mcp::HttpServer>(&spec_.config.transport)) {
    if (!http_) return Error::make(ErrorCode::kInternalError, "no HTTP client for " + who);
    // Refused before any connection when networkAccess does not name the host (the addresses
    // are checked again by the client once resolved).
    auto target = httpclient::parse_url(http->url);
    if (!target.ok()) {
      return Error::make(ErrorCode::kHandlerError, who + ": " + target.error().message);
    }
    // Shared by every request's check of this session.
    auto policy = std::make_shared<const egress::NetworkPolicy>(
        spec_.permissions.network_access.value_or(egress::NetworkPolicy()));
    auto check = [policy, who](const httpclient::Url& url,
                               const std::vector<std::string>& addresses) {
      auto refused = policy->check(url.host, url.port, addresses);
      if (refused) refused->message = who + ": " + refused->message;
      return refused;
    };
    if (auto refused = check(target.value(), {})) return *std::move(refused);
    auto allow = check;
    return std::unique_ptr<hearth::mcp::Transport>(std::make_unique<hearth::mcp::HttpTransport>(
        executor_, http_, *http, who, std::move(allow), spec_.max_message));
  }

  const auto& config = std::get<hearth::mcp::StdioServer>(spec_.config.transport);
  std::error_code ec;
  const fs::path cwd = fs::weakly_canonical(spec_.service_dir / config.cwd, ec);
  if (ec || !(cwd == spec_.service_dir || inside(cwd, spec_.service_dir)) ||
      !fs::is_directory(cwd, ec)) {
    return Error::make(ErrorCode::kHandlerError, who + ": cwd '" + config.cwd +
                                                     "' is not a folder inside the service folder");
  }
  Environment vars = base_environment(spec_.service, spec_.service_dir);
  for (const auto& [name, value] : config.env) vars[name] = value;

  proc::Command cmd;
  auto program = proc::find_program(config.command, vars["PATH"], cwd);
  if (!program) {
    json::object data;
    data["server"] = spec_.config.name;
    data["command"] = config.command;
    return Error::make(ErrorCode::kHandlerError,
                       who + " could not start: command not found: " + config.command,
                       std::move(data));
  }
  // Checked again at each start: a file or link in the folder may have changed since the load.
  if (auto refused = program_refusal(*program, spec_.service_dir)) {
    json::object data;
    data["server"] = spec_.config.name;
    data["command"] = config.command;
    return Error::make(ErrorCode::kPermissionDenied,
                       who + ": command '" + config.command + "' " + *refused, std::move(data));
  }
  cmd.program = std::move(*program);
  cmd.argv.push_back(config.command);
  for (const auto& a : config.args) cmd.argv.push_back(a);
  cmd.env = environment_entries(vars);
  cmd.cwd = cwd;

  auto child =
      confine::confined_stdio(spec_.jail.get(), spec_.permissions, spec_.service_dir, config.args,
                              std::move(cmd), executor_, spec_.service + " (" + who + ")");
  if (!child.ok()) return std::move(child).error();
  return std::unique_ptr<hearth::mcp::Transport>(std::make_unique<hearth::mcp::StdioTransport>(
      who, std::move(child.value().launch), std::move(child.value().verdict), spec_.max_message));
}

}  // namespace hearth::handlers::mcp
