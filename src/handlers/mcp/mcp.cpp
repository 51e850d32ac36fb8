#include "handlers/mcp/mcp.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <map>
#include <mutex>

#include "handlers/config.hpp"
#include "handlers/create.hpp"
#include "handlers/mcp/server.hpp"
#include "handlers/script/program.hpp"
#include "handlers/shared_helpers.hpp"

namespace hearth::handlers::mcp {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

/// The handler object, parsed (McpKind::parse).
struct Config final : manifest::HandlerConfig {
  std::string server;
  std::string tool;
  std::chrono::milliseconds timeout{0};    ///< its own; 0: the endpoint's
  std::chrono::milliseconds max_total{0};  ///< 0: none of its own
};

using ServerSource = std::function<std::shared_ptr<Server>(const asio::any_io_executor&)>;

class McpStream final : public Stream {
 public:
  void close() override { closed_ = true; }
  std::atomic<bool> closed_{false};
};

class McpHandler final : public Handler {
 public:
  McpHandler(Config config, ServerSource source)
      : config_(std::move(config)), source_(std::move(source)) {}

  asio::awaitable<Result<json::value>> call(Call call) override {
    auto server = source_(call.executor);
    if (!server) co_return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
    hearth::mcp::Limits limits;
    limits.timeout = call.limit(config_.timeout);
    limits.total = config_.max_total;
    if (call.endpoint != nullptr) {
      const auto& cap = call.endpoint->effective.max_execution_time;
      if (cap && cap->count() > 0 && (limits.total.count() == 0 || *cap < limits.total)) {
        limits.total = *cap;
      }
    }
    const auto started = std::chrono::steady_clock::now();
    auto session = co_await server->session(limits.timeout);
    if (!session.ok()) co_return std::move(session).error();
    if (limits.total.count() > 0) {
      // The start counts against the whole call's limit.
      const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
      limits.total = std::max(std::chrono::milliseconds(1), limits.total - spent);
    }
    auto result = co_await session.value()->call_tool(config_.tool, std::move(call.input), limits);
    if (!result.ok()) co_return std::move(result).error();
    co_return hearth::mcp::tool_result(config_.server, config_.tool, result.value());
  }

  /// A subscription endpoint calls its tool once when subscribed and sends the result as the
  /// stream's first item; further items come from other endpoints' publications.
  /// The tool is called once per subscriber: its result is that subscriber's snapshot.
  bool shares_streams() const override { return false; }

  Result<std::shared_ptr<Stream>> open_stream(Call call, StreamSink sink) override {
    if (!call.executor) return Error::make(ErrorCode::kInternalError, "no executor");
    auto stream = std::make_shared<McpStream>();
    auto executor = call.executor;
    asio::co_spawn(
        executor,
        [this, stream, sink = std::move(sink),
         call = std::move(call)]() mutable -> asio::awaitable<void> {
          auto result = co_await this->call(std::move(call));
          if (stream->closed_) co_return;
          if (!result.ok()) {
            if (sink.on_end) sink.on_end(std::move(result).error());
          } else if (sink.on_data) {
            sink.on_data(std::move(result).value());
          }
        },
        asio::detached);
    return std::shared_ptr<Stream>(stream);
  }

 private:
  Config config_;
  ServerSource source_;
};

bool valid_name(const json::value* v) {
  return v != nullptr && v->is_string() && !v->get_string().empty() &&
         v->get_string().find('\0') == json::string::npos;
}

class McpKind final : public Kind {
 public:
  explicit McpKind(const KindOptions& options) : options_(options) {}
  ~McpKind() override { shutdown(); }

  std::string_view name() const override { return "mcp"; }
  std::vector<std::string_view> keys() const override {
    return {"server", "tool", "timeout", "maxTotalTimeout"};
  }

  void shutdown() override {
    servers_.shutdown();
    std::shared_ptr<httpclient::Client> http;
    {
      std::lock_guard lock(mutex_);
      http = http_;
    }
    if (http) http->shutdown();
  }

  void release(const std::filesystem::path& service_dir) override {
    servers_.release(service_folder(service_dir));
  }

  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override {
    ConfigReader in(handler, path, problems);
    auto config = std::make_shared<Config>();
    if (const auto* server = in.get("server"); valid_name(server)) {
      config->server = std::string(server->get_string());
    } else {
      in.add("server", "is required: the name of a server in the service's mcp-config.json");
    }
    if (const auto* tool = in.get("tool"); valid_name(tool)) {
      config->tool = std::string(tool->get_string());
    } else {
      in.add("tool", "is required: the name of the tool to call");
    }
    config->timeout = in.milliseconds("timeout");
    config->max_total = in.milliseconds("maxTotalTimeout");
    return in.result(std::move(config));
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest& service,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_ASSIGN_OR_RETURN(auto parsed, config_of<Config>(*this, endpoint));
    const Config& config = *parsed;
    const fs::path dir = service_folder(service.dir);
    auto servers = hearth::mcp::load_config(dir);
    if (!servers.ok()) return std::move(servers).error();
    const auto* server = servers->find(config.server);
    if (server == nullptr) {
      std::error_code ec;
      if (!fs::exists(dir / hearth::mcp::kConfigFile, ec)) {
        return Error::make(ErrorCode::kInvalidParams, "server '" + config.server +
                                                          "' is not configured: the service folder "
                                                          "has no mcp-config.json");
      }
      return Error::make(ErrorCode::kInvalidParams,
                         "server '" + config.server +
                             "' is not in mcp-config.json (it configures: " + servers->names() +
                             ")");
    }

    // A stdio server's command must be this service's code or a system program: the jail lets
    // the server read its program's folder, which must never be another service's.
    if (const auto* stdio = std::get_if<hearth::mcp::StdioServer>(&server->transport)) {
      std::string path_env(kSystemPath);
      for (const auto& [name, value] : stdio->env) {
        if (name == "PATH") path_env = value;
      }
      std::error_code ec;
      fs::path cwd = fs::weakly_canonical(dir / stdio->cwd, ec);
      if (ec) cwd = (dir / stdio->cwd).lexically_normal();
      if (auto refused = command_refusal(stdio->command, path_env, cwd, dir)) {
        return Error::make(ErrorCode::kInvalidParams,
                           "mcp-config.json: server '" + config.server + "': " + *refused);
      }
    }

    ServerSpec spec;
    spec.config = *server;
    spec.service = service.name;
    spec.service_dir = dir;
    spec.permissions = endpoint.effective;
    spec.jail = options_.jail;
    spec.max_message = options_.max_output_bytes;
    // Endpoints with the same permissions share a session (a stdio server's jail is made from
    // them).
    auto slot = servers_.slot(
        dir, config.server + "\n" + json::serialize(json::value(endpoint.effective.to_json())),
        std::move(spec));
    auto source = [this, slot](const asio::any_io_executor& call_executor) {
      return slot->get([&](const ServerSpec& s) { return make_server(s, call_executor); });
    };
    return std::unique_ptr<Handler>(std::make_unique<McpHandler>(config, source));
  }

 private:
  /// A server for `spec`, on the daemon's executor (or, in tests, the first call's).
  std::shared_ptr<Server> make_server(const ServerSpec& spec,
                                      const asio::any_io_executor& call_executor) const {
    auto executor = options_.executor ? options_.executor : call_executor;
    if (!executor) return nullptr;
    std::lock_guard lock(mutex_);
    if (!http_) http_ = std::make_shared<httpclient::Client>(executor);
    return std::make_shared<Server>(executor, spec, http_);
  }

  KindOptions options_;
  mutable SharedHelpers<Server, ServerSpec> servers_;
  mutable std::mutex mutex_;  ///< guards http_
  mutable std::shared_ptr<httpclient::Client> http_;
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<McpKind>(options);
}

namespace {

/// Starts one server, lists its tools, stops it.
asio::awaitable<ServerTools> list_one(std::shared_ptr<Server> server, bool stdio,
                                      std::chrono::milliseconds timeout) {
  ServerTools entry;
  entry.name = server->name();
  entry.transport = stdio ? "stdio" : "http";
  auto session = co_await server->session(timeout);
  if (!session.ok()) {
    entry.tools = std::move(session).error();
  } else {
    entry.protocol_version = session.value()->protocol_version();
    entry.server_info = session.value()->server_info();
    entry.tools = co_await session.value()->tools(timeout);
  }
  server->stop();
  co_return entry;
}

}  // namespace

namespace {

using ServerList = std::vector<std::pair<std::shared_ptr<Server>, bool>>;

asio::awaitable<std::vector<ServerTools>> list_all(ServerList servers,
                                                   std::shared_ptr<httpclient::Client> http,
                                                   std::chrono::milliseconds timeout) {
  std::vector<ServerTools> out;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    out.push_back(co_await list_one(servers[i].first, servers[i].second, timeout));
  }
  http->shutdown();
  co_return out;
}

}  // namespace

// Not a coroutine itself: what it is given is turned into servers first, so that no string
// parameter lives in a coroutine frame (GCC 12 mis-destroys some of those).
// NOLINTBEGIN(performance-unnecessary-value-param): a coroutine's parameters must be values
asio::awaitable<std::vector<ServerTools>> list_tools(
    asio::any_io_executor executor, const KindOptions& options, std::string service,
    fs::path service_dir, hearth::mcp::Config config,
    std::function<manifest::Permissions(const std::string& server)> permissions_of,
    std::chrono::milliseconds timeout) {
  // NOLINTEND(performance-unnecessary-value-param)
  auto http = std::make_shared<httpclient::Client>(executor);
  const fs::path dir = service_folder(service_dir);
  ServerList servers;
  for (const auto& server_config : config.servers) {
    ServerSpec spec;
    spec.config = server_config;
    spec.service = service;
    spec.service_dir = dir;
    spec.permissions = permissions_of(spec.config.name);
    spec.jail = options.jail;
    spec.max_message = options.max_output_bytes;
    const bool stdio = spec.config.stdio();
    servers.emplace_back(std::make_shared<Server>(executor, std::move(spec), http), stdio);
  }
  return list_all(std::move(servers), std::move(http), timeout);
}

}  // namespace hearth::handlers::mcp
