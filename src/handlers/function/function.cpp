#include "handlers/function/function.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <filesystem>

#include "handlers/config.hpp"
#include "handlers/create.hpp"
#include "handlers/shared_helpers.hpp"
#include "js/modules.hpp"
#include "jsworker/pool.hpp"

namespace hearth::handlers::function {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

using jsworker::Pool;
using jsworker::PoolConfig;

// ---------------------------------------------------------------------------------------------
// Handlers and the kind.

/// The handler object, parsed (FunctionKind::parse).
struct Config final : manifest::HandlerConfig {
  std::string module;  ///< relative, normalised
  std::string function;
  std::chrono::milliseconds timeout{0};  ///< the handler's own; 0: none
  bool keep_state = false;               ///< isolation "worker"
};

class FunctionStream final : public Stream {
 public:
  void close() override { closed_ = true; }
  std::atomic<bool> closed_{false};
};

class FunctionHandler final : public Handler {
 public:
  FunctionHandler(Config config, std::string endpoint,
                  std::function<std::shared_ptr<Pool>(const asio::any_io_executor&)> pool)
      : config_(std::move(config)), endpoint_(std::move(endpoint)), pool_(std::move(pool)) {}

  asio::awaitable<Result<json::value>> call(Call call) override {
    auto pool = pool_(call.executor);
    if (!pool) co_return no_pool(call);
    auto request = job(call, *pool);
    auto answer = co_await pool->run(std::move(request));
    if (!answer.ok()) co_return std::move(answer).error();
    co_return std::move(answer.value().value);
  }

  /// The function runs once per subscriber: its result is that subscriber's snapshot.
  bool shares_streams() const override { return false; }

  Result<std::shared_ptr<Stream>> open_stream(Call call, StreamSink sink) override {
    if (!call.executor) {
      return Error::make(ErrorCode::kInternalError, "no executor to run the subscription on");
    }
    auto pool = pool_(call.executor);
    if (!pool) return no_pool(call);
    // The function runs once when the subscription opens: its result (unless null) is the first
    // item; later items come from ctx.publish in other calls. The stream ends only when closed.
    auto stream = std::make_shared<FunctionStream>();
    auto executor = call.executor;
    asio::co_spawn(
        executor,
        [pool, stream, sink = std::move(sink),
         request = job(call, *pool)]() mutable -> asio::awaitable<void> {
          auto result = co_await pool->run(std::move(request));
          if (stream->closed_) co_return;
          if (!result.ok()) {
            if (sink.on_end) sink.on_end(std::move(result).error());
          } else if (!result.value().value.is_null() && sink.on_data) {
            sink.on_data(std::move(result.value().value));
          }
        },
        asio::detached);
    return std::shared_ptr<Stream>(stream);
  }

 private:
  /// Why there is no pool: no executor to start it on, or the daemon stopped the kind.
  static Error no_pool(const Call& call) {
    if (!call.executor) return Error::make(ErrorCode::kInternalError, "no executor for JS workers");
    return Error::make(ErrorCode::kHandlerError, "the daemon is stopping");
  }

  /// The call as a request for `pool`: its logs go to the daemon's log as `service.endpoint:`
  /// lines, its ctx.publish to the call's publisher.
  jsworker::Job job(const Call& call, const Pool& pool) const {
    jsworker::CallFunction request;
    request.module = config_.module;
    request.function = config_.function;
    request.endpoint = endpoint_;
    request.input = call.input;
    request.mutation =
        call.endpoint != nullptr && call.endpoint->method == manifest::Method::kMutation;
    request.keep_state = config_.keep_state;
    jsworker::Job j;
    j.request = std::move(request);
    j.timeout = call.limit(config_.timeout);
    j.label = endpoint_;
    const std::string who = pool.service() + "." + endpoint_;
    j.on_log = [who, listener = call.on_log](const jsworker::Log& log) {
      std::string_view level = "info";
      switch (log.level) {
        case jsworker::LogLevel::kError:
          spdlog::error("{}: {}", who, log.message);
          level = "error";
          break;
        case jsworker::LogLevel::kWarn:
          spdlog::warn("{}: {}", who, log.message);
          level = "warning";
          break;
        case jsworker::LogLevel::kDebug:
          spdlog::debug("{}: {}", who, log.message);
          level = "debug";
          break;
        case jsworker::LogLevel::kInfo:
          spdlog::info("{}: {}", who, log.message);
          break;
      }
      if (listener) listener(level, log.message);
    };
    j.on_publish = [who, publisher = call.publisher](const jsworker::Publish& p) {
      if (publisher == nullptr || !publisher->publish(p.subscription, p.data)) {
        spdlog::warn("{}: ctx.publish to '{}' was not delivered", who, p.subscription);
      }
    };
    return j;
  }

  Config config_;
  std::string endpoint_;
  std::function<std::shared_ptr<Pool>(const asio::any_io_executor&)> pool_;
};

bool has_nul(std::string_view s) {
  return s.find('\0') != std::string_view::npos;
}

class FunctionKind final : public Kind {
 public:
  explicit FunctionKind(const KindOptions& options) : options_(options) {
    if (options_.js_worker.empty()) options_.js_worker = jsworker::default_worker_program();
  }

  ~FunctionKind() override { shutdown(); }

  void shutdown() override { pools_.shutdown(); }

  void release(const std::filesystem::path& service_dir) override {
    pools_.release(service_folder(service_dir));
  }

  std::string_view name() const override { return "function"; }
  std::vector<std::string_view> keys() const override {
    return {"module", "function", "isolation", "timeout"};
  }

  bool ready() const override {
    bool all = true;
    pools_.for_each([&all](Pool& pool) { all = all && pool.warm(); });
    return all;
  }

  std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override {
    ConfigReader in(handler, path, problems);
    auto config = std::make_shared<Config>();
    const auto* module = in.get("module");
    if (module == nullptr) {
      in.add("module", "is required (the JavaScript module file, relative to the service folder)");
    } else if (!module->is_string() || module->get_string().empty()) {
      in.add("module", "must be a non-empty string (a file relative to the service folder)");
    } else if (has_nul(module->get_string())) {
      in.add("module", "must not contain NUL characters");
    } else {
      const std::string m(module->get_string());
      const fs::path p(m);
      const auto normal = p.lexically_normal();
      if (p.is_absolute() || normal.empty() || *normal.begin() == "..") {
        in.add("module", "must be a path inside the service folder");
      } else if (auto ts = js::typescript_refusal(m); !ts.empty()) {
        in.add("module", ts);
      } else if (const auto ext = p.extension(); ext != ".js" && ext != ".mjs" && ext != ".cjs") {
        in.add("module", "must name a JavaScript file (.js, .mjs or .cjs)");
      } else {
        config->module = normal.generic_string();
      }
    }
    const auto* fn = in.get("function");
    if (fn == nullptr) {
      in.add("function", "is required (the name of the exported function)");
    } else if (!fn->is_string() || fn->get_string().empty() || has_nul(fn->get_string())) {
      in.add("function", "must be a non-empty string (the exported function's name)");
    } else {
      config->function = std::string(fn->get_string());
    }
    config->timeout = in.milliseconds("timeout");
    if (const auto* isolation = in.get("isolation")) {
      if (isolation->is_string() && isolation->get_string() == "call") {
        config->keep_state = false;
      } else if (isolation->is_string() && isolation->get_string() == "worker") {
        config->keep_state = true;
      } else {
        in.add("isolation",
               "must be \"call\" (a fresh module instance per call, the default) or \"worker\" "
               "(the module's state kept between the calls a worker runs)");
      }
    }
    return in.result(std::move(config));
  }

  Result<std::unique_ptr<Handler>> create(const manifest::Manifest& service,
                                          const manifest::Endpoint& endpoint) const override {
    HEARTH_ASSIGN_OR_RETURN(auto parsed, config_of<Config>(*this, endpoint));
    const Config& config = *parsed;
    const fs::path dir = service_folder(service.dir);
    std::error_code ec;
    const fs::path file = dir / config.module;
    const fs::path real = fs::weakly_canonical(file, ec);
    if (ec || !fs::is_regular_file(real, ec)) {
      return Error::make(ErrorCode::kInternalError, "handler.module '" + config.module +
                                                        "' does not exist in " + dir.string());
    }
    if (!js::is_inside(dir, real)) {
      return Error::make(ErrorCode::kInternalError,
                         "handler.module '" + config.module + "' leads outside the service folder");
    }

    // A static import that cannot load (outside the folder, a package, missing) would fail every
    // call: refused at load instead, so `hearth check` and `hearth serve` report it.
    if (auto problems = js::import_problems(dir, config.module); !problems.empty()) {
      std::string message = "handler.module '" + config.module + "' has imports that cannot load: ";
      for (std::size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
      return Error::make(ErrorCode::kInternalError, std::move(message));
    }

    // The folders the worker's jail must let it read: the module and what it imports.
    std::vector<std::string> code;
    for (const auto& rel : js::scan_imports(dir, config.module)) {
      code.push_back((dir / rel).string());
    }

    PoolConfig pool_config;
    pool_config.service = service.name;
    pool_config.service_dir = dir;
    pool_config.permissions = endpoint.effective;
    for (const auto& ep : service.endpoints) {
      if (ep.method == manifest::Method::kSubscription) pool_config.subscriptions.push_back(ep.id);
    }
    pool_config.code_files = std::move(code);
    pool_config.size = std::max<std::size_t>(1, options_.js_workers);
    pool_config.worker_program = options_.js_worker;
    pool_config.jail = options_.jail;

    // Endpoints with the same permissions share a pool (a worker's jail is made from them).
    const std::vector<std::string> code_files = pool_config.code_files;
    auto slot = pools_.slot(dir, json::serialize(json::value(endpoint.effective.to_json())),
                            std::move(pool_config), [&code_files](PoolConfig& shared, Pool* pool) {
                              if (pool != nullptr) {
                                pool->add_code_files(code_files);
                              } else {
                                for (const auto& f : code_files) shared.code_files.push_back(f);
                              }
                            });
    // Without a daemon-wide executor (tests), the pool starts on the first call's executor.
    auto get_pool = [slot](const asio::any_io_executor& executor) -> std::shared_ptr<Pool> {
      return slot->get([&executor](const PoolConfig& c) -> std::shared_ptr<Pool> {
        if (!executor) return nullptr;
        auto pool = std::make_shared<Pool>(executor, c);
        pool->start();
        return pool;
      });
    };
    if (options_.executor && options_.warm_pools) get_pool(options_.executor);
    return std::unique_ptr<Handler>(
        std::make_unique<FunctionHandler>(config, endpoint.id, std::move(get_pool)));
  }

 private:
  KindOptions options_;
  mutable SharedHelpers<Pool, PoolConfig> pools_;
};

}  // namespace

std::unique_ptr<Kind> make_kind(const KindOptions& options) {
  return std::make_unique<FunctionKind>(options);
}

}  // namespace hearth::handlers::function
