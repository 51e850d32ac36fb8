#include "daemon/daemon.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <csignal>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "daemon/instance.hpp"
#include "daemon/state_dir.hpp"
#include "json/json.hpp"
#include "net/routes.hpp"
#include "net/server.hpp"
#include "proc/process.hpp"
#include "rpc/dispatcher.hpp"

namespace hearth::daemon {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

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

/// A short string member of `params` for the log line, cleaned of control characters.
std::string loggable_member(const json::value& params, std::string_view key) {
  if (!params.is_object()) return {};
  const auto* v = params.get_object().if_contains(key);
  if (v == nullptr || !v->is_string()) return {};
  std::string out;
  for (char c : v->get_string()) {
    if (out.size() >= 80) break;
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return out;
}

/// The per-call log line at info: method, what it acted on, outcome, milliseconds, transport.
void log_call(const rpc::CallRecord& call) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  const auto& params = call.request.params;
  std::string target = loggable_member(params, "service");
  if (auto endpoint = loggable_member(params, "endpoint"); !endpoint.empty()) {
    target += target.empty() ? endpoint : "/" + endpoint;
  }
  for (std::string_view key : {"name", "workspaceId", "appId", "capability", "serviceId"}) {
    if (!target.empty()) break;
    target = loggable_member(params, key);
  }
  const double ms = std::chrono::duration<double, std::milli>(call.elapsed).count();
  const std::string& transport = call.request.session ? call.request.session->transport() : "";
  if (call.error == nullptr) {
    spdlog::info("call {}{}{} ok {:.1f} ms {}", call.request.method, target.empty() ? "" : " ",
                 target, ms, transport);
  } else {
    spdlog::info("call {}{}{} error {} {:.1f} ms {}", call.request.method,
                 target.empty() ? "" : " ", target, static_cast<int>(call.error->code), ms,
                 transport);
  }
}

struct Factory {
  std::string name;
  std::vector<std::string_view> dependencies;
  std::function<std::unique_ptr<Component>(Context&)> make;
};

}  // namespace

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

struct Daemon::State {
  Options options;
  fs::path state_dir;
  std::vector<Factory> factories;
  std::function<void(const json::object&, const std::string&)> on_ready;

  // Built by run(), destroyed in reverse: the io_context outlives every component and the
  // server, the components outlive the server (its routes and dispatchers call into them).
  std::optional<asio::io_context> ioc;
  std::vector<std::pair<const Factory*, std::unique_ptr<Component>>> built;
  const Factory* building = nullptr;
  rpc::Dispatcher dispatcher;
  std::deque<rpc::Dispatcher> endpoints;
  std::vector<net::ServerOptions::RpcService> rpc_services;
  net::Routes routes;
  std::unique_ptr<net::Server> server;

  mutable std::mutex url_mu;
  std::string url;
  std::atomic<bool> stopping{false};
  std::atomic<int> exit_code{0};
  std::optional<asio::steady_timer> children_poll;
  std::optional<asio::steady_timer> ready_poll;

  ~State() {
    server.reset();
    while (!built.empty()) built.pop_back();
  }
  Result<std::vector<const Factory*>> order() const;
  void stop_built();
  void begin_shutdown();
  std::optional<json::object> listen(const fs::path& token_file, const std::string& token);
  void announce_when_ready(json::object& ready, const std::string& token);
};

namespace {

class SurfaceImpl : public Surface {
 public:
  explicit SurfaceImpl(Daemon::State& state) : state_(state) {}
  rpc::Dispatcher& rpc() override { return state_.dispatcher; }
  net::Routes& routes() override { return state_.routes; }
  rpc::Dispatcher& endpoint(std::string http_path, std::string ws_path) override {
    auto& dispatcher = state_.endpoints.emplace_back();
    dispatcher.set_observer(log_call);
    state_.rpc_services.push_back({std::move(http_path), std::move(ws_path), &dispatcher});
    return dispatcher;
  }

 private:
  Daemon::State& state_;
};

}  // namespace

Result<std::vector<const Factory*>> Daemon::State::order() const {
  // Depth first over the declared dependencies, in the order the components were added: a
  // component comes after everything it depends on, and ties keep the order of add().
  std::map<std::string_view, const Factory*> by_name;
  for (const auto& f : factories) {
    if (!by_name.emplace(f.name, &f).second) {
      return Error::make(ErrorCode::kInternalError, "component " + f.name + " is added twice");
    }
  }
  std::vector<const Factory*> out;
  std::map<std::string_view, int> mark;  // 1: being visited, 2: placed
  std::function<Status(const Factory&, std::string)> visit = [&](const Factory& f,
                                                                 std::string path) -> Status {
    path += (path.empty() ? "" : " -> ") + f.name;
    if (mark[f.name] == 2) return {};
    if (mark[f.name] == 1) {
      return Error::make(ErrorCode::kInternalError, "components depend on each other: " + path);
    }
    mark[f.name] = 1;
    for (auto dep : f.dependencies) {
      auto it = by_name.find(dep);
      if (it == by_name.end()) {
        return Error::make(ErrorCode::kInternalError, "component " + f.name + " depends on " +
                                                          std::string(dep) +
                                                          ", which the daemon does not have");
      }
      HEARTH_RETURN_IF_ERROR(visit(*it->second, path));
    }
    mark[f.name] = 2;
    out.push_back(&f);
    return {};
  };
  for (const auto& f : factories) HEARTH_RETURN_IF_ERROR(visit(f, ""));
  return out;
}

void Daemon::State::stop_built() {
  for (auto it = built.rbegin(); it != built.rend(); ++it) it->second->stop();
}

void Daemon::State::begin_shutdown() {
  if (stopping.exchange(true)) return;
  if (ready_poll) ready_poll->cancel();
  // No new requests, every connection closed; then the components in reverse order; then the
  // children still running are killed and waited for (bounded), so nothing is left behind.
  if (server) server->stop();
  stop_built();
  proc::kill_all();
  stop_when_children_gone(*ioc, *children_poll,
                          std::chrono::steady_clock::now() + std::chrono::seconds(3));
}

const Options& Context::options() const {
  return daemon_.state_->options;
}
const fs::path& Context::state_dir() const {
  return daemon_.state_->state_dir;
}
asio::io_context& Context::io() {
  return *daemon_.state_->ioc;
}

std::string Context::url() const {
  std::lock_guard lock(daemon_.state_->url_mu);
  return daemon_.state_->url;
}

void Context::broadcast(const std::string& message) {
  if (daemon_.state_->server) daemon_.state_->server->broadcast(message);
}

void Context::fail(int exit_code) {
  auto* state = daemon_.state_.get();
  asio::post(*state->ioc, [state, exit_code] {
    state->exit_code = exit_code;
    state->begin_shutdown();
  });
}

Component& Context::find_component(std::string_view name) {
  auto& state = *daemon_.state_;
  const auto& declared = state.building->dependencies;
  if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
    throw StartupError("component " + state.building->name + " uses " + std::string(name) +
                       " without declaring it in dependencies()");
  }
  for (auto& [factory, component] : state.built) {
    if (factory->name == name) return *component;
  }
  throw StartupError("component " + std::string(name) + " is not built");  // order() prevents it
}

Daemon::Daemon(Options options) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
}

Daemon::~Daemon() = default;

void Daemon::add_factory(std::string name, std::vector<std::string_view> dependencies,
                         std::function<std::unique_ptr<Component>(Context&)> make) {
  state_->factories.push_back({std::move(name), std::move(dependencies), std::move(make)});
}

void Daemon::on_ready(std::function<void(const json::object&, const std::string&)> fn) {
  state_->on_ready = std::move(fn);
}

Result<std::vector<std::string>> Daemon::start_order() const {
  HEARTH_ASSIGN_OR_RETURN(auto order, state_->order());
  std::vector<std::string> names;
  names.reserve(order.size());
  for (const auto* f : order) names.push_back(f->name);
  return names;
}

namespace {

/// Builds the components in `order`; false (logged, what was built stopped) when one throws.
bool build_components(Daemon::State& state, Context& context,
                      const std::vector<const Factory*>& order) {
  for (const auto* factory : order) {
    state.building = factory;
    try {
      state.built.emplace_back(factory, factory->make(context));
    } catch (const StartupError& e) {
      spdlog::error("{}", e.what());
      state.exit_code = e.code();
      state.stop_built();
      return false;
    }
  }
  state.building = nullptr;
  return true;
}

/// The threads that run the io_context: --threads, else one a core.
unsigned io_threads(const Options& options) {
  return options.threads > 0 ? static_cast<unsigned>(options.threads)
                             : std::max(1u, std::thread::hardware_concurrency());
}

net::ServerOptions server_options(const Options& options, std::string token) {
  net::ServerOptions out;
  out.io_threads = io_threads(options);
  out.address = options.address;
  out.port = static_cast<std::uint16_t>(options.port);
  out.token = std::move(token);
  out.allowed_origins = options.allowed_origins;
  out.max_request_bytes = options.max_request_bytes;
  out.idle_timeout = std::chrono::seconds(options.idle_timeout_s);
  const std::size_t file_limit = raise_file_limit();
  out.max_connections =
      options.max_connections > 0 ? options.max_connections : default_max_connections(file_limit);
  if (out.max_connections > file_limit) {
    spdlog::warn("--max-connections {} is above the file limit {}: connections beyond it will fail",
                 out.max_connections, file_limit);
  }
  out.max_websockets = options.max_websockets;
  out.header_timeout = std::chrono::milliseconds(options.header_timeout_ms);
  return out;
}

/// The ready document's addresses (daemon.json, --ready-file, --json).
json::object addresses(const std::string& address, std::uint16_t port, const fs::path& token_file) {
  const std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  const std::string url = "http://" + host + ":" + std::to_string(port);
  json::object ready;
  ready["url"] = url;
  ready["rpcUrl"] = url + "/rpc";
  ready["wsUrl"] = "ws://" + host + ":" + std::to_string(port) + "/ws";
  ready["port"] = port;
  ready["tokenFile"] = fs::absolute(token_file).string();
  ready["uiUrl"] = url + "/ui/";
  ready["mcpUrl"] = url + "/mcp";
  ready["a2aUrl"] = url + "/a2a";
  ready["agentCardUrl"] = url + "/.well-known/agent-card.json";
  ready["pid"] = ::getpid();
  return ready;
}

}  // namespace

/// Listens with `token` and returns the ready document's addresses; logs and returns nullopt
/// when the daemon cannot serve.
std::optional<json::object> Daemon::State::listen(const fs::path& token_file,
                                                  const std::string& token) {
  auto opts = server_options(options, token);
  opts.rpc_services = rpc_services;
  server = std::make_unique<net::Server>(*ioc, std::move(opts), dispatcher, std::move(routes));
  auto port = server->listen();
  if (!port.ok()) {
    spdlog::error("cannot listen on {}:{}: {}", options.address, options.port,
                  port.error().message);
    return std::nullopt;
  }
  if (options.address != "127.0.0.1" && options.address != "::1" &&
      options.address != "localhost") {
    spdlog::warn("listening on {}: reachable from other machines (the token is still required)",
                 options.address);
  }
  json::object ready = addresses(options.address, *port, token_file);
  std::lock_guard lock(url_mu);
  url = std::string(ready["url"].as_string());
  return ready;
}

/// Once every component is ready: daemon.json, the ready file, the announcement. Asked again
/// every 5 ms until then.
void Daemon::State::announce_when_ready(json::object& ready, const std::string& token) {
  if (stopping) return;
  for (auto& [factory, component] : built) {
    if (component->ready()) continue;
    ready_poll->expires_after(std::chrono::milliseconds(5));
    ready_poll->async_wait([this, &ready, &token](const boost::system::error_code& ec) {
      if (!ec) announce_when_ready(ready, token);
    });
    return;
  }
  for (auto& [factory, component] : built) component->describe(ready);
  const std::string text = json::dump(ready) + "\n";
  // Where `hearth open` and `hearth call --daemon` find this daemon (the token stays in its own
  // file). Written before the ready file: whoever waits for that one finds it.
  const fs::path daemon_file = state_dir / "daemon.json";
  std::string error;
  if (!write_private_file(daemon_file, text, error)) {
    spdlog::warn("{}: {}", daemon_file.string(), error);
  }
  if (!options.ready_file.empty() && !write_private_file(options.ready_file, text, error)) {
    spdlog::error("ready file: {}", error);
    exit_code = 1;
    begin_shutdown();
    return;
  }
  if (on_ready) on_ready(ready, token);
}

int Daemon::run() {
  // Children's pipes may close under us; a write to them must be an error, not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file size limit a write must fail (EFBIG, reported), not kill the daemon.
  std::signal(SIGXFSZ, SIG_IGN);
  auto& state = *state_;
  const auto& options = state.options;

  std::string error;
  state.state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
  if (!ensure_private_dir(state.state_dir, error)) {
    spdlog::error("state dir: {}", error);
    return 1;
  }
  // One daemon per state folder: a second one would take over the token file and daemon.json
  // and start the apps' backends twice.
  auto lock = InstanceLock::acquire(state.state_dir);
  if (!lock.ok()) {
    spdlog::error("{}", lock.error().message);
    return 1;
  }
  auto file_log = FileLog::open(log_file(state.state_dir));
  if (!file_log.ok()) spdlog::warn("log file: {}", file_log.error().message);
  // The token stays the same across restarts (clients keep their configuration) unless the
  // person asks for a new one, or the file is not one hearth wrote.
  const fs::path token_file =
      options.token_file.empty() ? state.state_dir / "token" : options.token_file;
  auto token = load_or_create_token(token_file, options.rotate_token);
  if (!token.ok()) {
    spdlog::error("{}", token.error().message);
    return 1;
  }
  const unsigned threads = io_threads(options);
  state.ioc.emplace(static_cast<int>(threads));
  state.children_poll.emplace(*state.ioc);
  state.ready_poll.emplace(*state.ioc);

  auto order = state.order();
  if (!order.ok()) {
    spdlog::error("{}", order.error().message);
    return 1;
  }
  state.dispatcher.set_observer(log_call);
  Context context(*this);
  if (!build_components(state, context, order.value())) return state.exit_code;
  SurfaceImpl surface(state);
  for (auto& [factory, component] : state.built) {
    if (auto st = component->expose(surface); !st.ok()) {
      spdlog::error("{}: {}", factory->name, st.error().message);
      state.stop_built();
      return 1;
    }
  }
  auto ready = state.listen(token_file, token.value());
  if (!ready) {
    state.stop_built();
    return 1;
  }
  (*ready)["stateDir"] = fs::absolute(state.state_dir).string();
  (*ready)["logFile"] = fs::absolute(log_file(state.state_dir)).string();
  state.server->start();
  for (auto& [factory, component] : state.built) component->start();

  asio::signal_set signals(*state.ioc, SIGINT, SIGTERM);
  signals.async_wait([&state](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    state.begin_shutdown();
  });
  asio::post(*state.ioc, [&] { state.announce_when_ready(*ready, token.value()); });

  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&state] { state.ioc->run(); });
  state.ioc->run();
  for (auto& t : pool) t.join();

  proc::kill_all();  // anything started while stopping
  // The token file stays (the next start reuses it); daemon.json says a daemon serves.
  std::error_code ec;
  fs::remove(state.state_dir / "daemon.json", ec);
  if (!options.ready_file.empty()) fs::remove(options.ready_file, ec);
  // The server first (its routes and dispatchers call into the components), then the
  // components in reverse order, then the io_context.
  state.server.reset();
  while (!state.built.empty()) state.built.pop_back();
  spdlog::info("stopped");
  return state.exit_code;
}

}  // namespace hearth::daemon
