#pragma once
/// Handler kinds are extensions: each lives in its own folder under handlers/ and registers a Kind
/// under its manifest `type` string. The host only sees these interfaces.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/problem.hpp"
#include "common/result.hpp"
#include "jail/jail.hpp"
#include "json/json.hpp"
#include "manifest/manifest.hpp"

namespace hearth::a2s {
class Gateway;
}

namespace hearth::handlers {

/// Sends data to the subscribers of one of the service's subscription endpoints.
class Publisher {
 public:
  virtual ~Publisher() = default;
  /// Returns false when `subscription` is not a subscription endpoint of the service.
  virtual bool publish(std::string_view subscription, json::value data) = 0;
};

/// One invocation of an endpoint.
struct Call {
  const manifest::Manifest* service = nullptr;
  const manifest::Endpoint* endpoint = nullptr;
  json::value input;                         ///< validated, defaults applied
  std::chrono::milliseconds timeout{30000};  ///< endpoint/manifest maxExecutionTime or the default;
                                             ///< a kind may narrow it with its own setting
  Publisher* publisher = nullptr;            ///< never null when called by the host
  boost::asio::any_io_executor executor;     ///< where the handler's I/O runs
  /// Told each line the handler logs while it runs (level "error", "warning", "info" or
  /// "debug"; any thread, must not block), besides the daemon's log; empty: nobody listens.
  /// A kind whose handlers have no log lines of their own ignores it.
  std::function<void(std::string_view level, std::string_view message)> on_log;

  /// The time limit of a handler whose own `timeout` is `own` (0: none): its own, else the
  /// endpoint's; a declared maxExecutionTime caps both.
  std::chrono::milliseconds limit(std::chrono::milliseconds own) const {
    auto t = own.count() > 0 ? own : timeout;
    if (endpoint != nullptr) {
      const auto& cap = endpoint->effective.max_execution_time;
      if (cap && cap->count() > 0 && (t.count() <= 0 || *cap < t)) t = *cap;
    }
    return t;
  }
};

/// Receives what a subscription stream produces.
struct StreamSink {
  std::function<void(json::value data)> on_data;
  /// Once, when the stream ends by itself: nullopt for a clean end, else the error.
  std::function<void(std::optional<Error> error)> on_end;
};

class Stream {
 public:
  virtual ~Stream() = default;
  /// Stops producing; no sink callback runs afterwards. Idempotent.
  virtual void close() = 0;
};

/// A handler bound to one endpoint, created once when the manifest is loaded.
class Handler {
 public:
  virtual ~Handler() = default;
  /// Runs the endpoint once (query or mutation).
  virtual boost::asio::awaitable<Result<json::value>> call(Call call) = 0;
  /// Starts the producer of a subscription endpoint.
  virtual Result<std::shared_ptr<Stream>> open_stream(Call call, StreamSink sink) = 0;
  /// Whether subscribers with the same input may share one producer. True for producers that
  /// keep running and whose latest item is the current state (a script's output lines); false
  /// for those that compute one snapshot when opened (a function or tool called once), so that
  /// every subscriber gets a snapshot of its own time.
  virtual bool shares_streams() const { return true; }
};

/// Daemon-wide settings handler kinds may use.
struct KindOptions {
  std::size_t max_output_bytes = std::size_t{16} << 20;
  /// The jail every handler process goes through. Null only in tests and embeddings that run
  /// handlers unconfined on purpose; the daemon always sets it.
  std::shared_ptr<const jail::Jail> jail;
  /// Where long-lived helpers (JS worker pools) run; the host sets its own. Empty: they start on
  /// the executor of their first call (tests).
  boost::asio::any_io_executor executor;
  /// Worker processes per JS pool (`function` handlers; a pool per service and permission set).
  std::size_t js_workers = 2;
  /// Start worker pools when the manifest loads (the daemon); false: at their first call (a
  /// one-shot `hearth call`).
  bool warm_pools = true;
  /// The JS worker executable; empty: `hearth-js-worker` beside the running executable.
  std::filesystem::path js_worker;
  /// The daemon's A2S registry, for `a2s` handlers; null: they are refused at load.
  std::shared_ptr<a2s::Gateway> a2s;
};

/// A handler kind: parses its part of a manifest and creates handlers.
class Kind {
 public:
  virtual ~Kind() = default;
  virtual std::string_view name() const = 0;
  /// The members of a handler object of this kind, besides `type`: any other member is
  /// reported as an unknown key (a warning naming the closest of these). Empty: not checked.
  virtual std::vector<std::string_view> keys() const { return {}; }
  /// Parses a handler object of this kind into the kind's typed configuration (a type derived
  /// from manifest::HandlerConfig), appending every problem under `path`
  /// ("endpoints[1].handler"); null when there was a problem. The manifest loader keeps the
  /// result on the endpoint (Endpoint::handler_config).
  virtual std::shared_ptr<const manifest::HandlerConfig> parse(const json::object& handler,
                                                               const std::string& path,
                                                               Problems& problems) const = 0;
  /// Creates the handler of an endpoint from its parsed configuration (config_of() in
  /// handlers/create.hpp gives it, also for endpoints built without the loader).
  virtual Result<std::unique_ptr<Handler>> create(const manifest::Manifest& service,
                                                  const manifest::Endpoint& endpoint) const = 0;
  /// The daemon is stopping: stop long-lived helpers (worker pools) and start no new ones.
  virtual void shutdown() {}
  /// The service in `service_dir` is being replaced or removed: helpers made for it (worker
  /// pools, MCP servers) are not shared with handlers created from now on. Handlers already
  /// created keep theirs, which stop once those handlers are gone.
  virtual void release(const std::filesystem::path& service_dir) { (void)service_dir; }
  /// Whether the helpers started at load (warm worker pools) can take calls, or have given up
  /// starting. The daemon announces itself ready (the ready file) only then.
  virtual bool ready() const { return true; }
};

/// Kinds by name. Also answers the manifest loader's questions about kinds.
class Registry final : public manifest::HandlerKinds {
 public:
  void add(std::unique_ptr<Kind> kind);
  /// A kind the spec defines that this build does not run: manifests using it are refused
  /// at load with `reason`.
  void add_unsupported(std::string name, std::string reason);
  const Kind* find(std::string_view name) const;
  /// Calls every kind's shutdown().
  void shutdown();
  /// Calls every kind's release(service_dir).
  void release(const std::filesystem::path& service_dir);
  /// True when every kind is ready().
  bool ready() const;

  std::shared_ptr<const manifest::HandlerConfig> parse(std::string_view type,
                                                       const json::object& handler,
                                                       const std::string& path,
                                                       Problems& problems) const override;
  std::vector<std::string_view> handler_keys(std::string_view type) const override;

 private:
  std::map<std::string, std::unique_ptr<Kind>, std::less<>> kinds_;
  std::map<std::string, std::string, std::less<>> unsupported_;
};

}  // namespace hearth::handlers
