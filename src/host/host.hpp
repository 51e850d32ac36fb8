#pragma once
/// The host: the loaded services and what is done with them, whatever the transport (the daemon,
/// `hearth call` and tests all go through it):
/// - loader.cpp: finding and loading services (Host::load), and reloading them while serving
///   (Host::reload);
/// - pipeline.cpp: the call pipeline (lavs-spec-v1 6.3: validate input, run the handler,
///   validate output) and subscriptions;
/// - read_file.cpp: a file of a service read on a view's behalf.
/// The JSON-RPC methods over it are in src/methods (one folder per method group).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/blocking.hpp"
#include "common/problem.hpp"
#include "common/result.hpp"
#include "handlers/handler.hpp"
#include "host/audit.hpp"
#include "host/subscriber.hpp"
#include "host/subscriptions.hpp"
#include "manifest/manifest.hpp"
#include "schema/schema.hpp"

namespace hearth::host {

struct HostOptions {
  /// Time limit of a call when neither the handler nor the permissions set one.
  std::chrono::milliseconds default_timeout{30000};
  handlers::KindOptions kinds;
  /// lavs/readFile refuses larger files.
  std::size_t max_read_file_bytes = std::size_t{8} << 20;
  /// What one connection may hold in subscriptions, per service.
  SubscriptionHub::Limits subscription_limits;
  /// Threads for blocking work (file reads, validating large values, the audit log).
  std::size_t blocking_threads = 2;
  /// Serve even when no service is given (the daemon serves an A2S registry only); otherwise
  /// loading nothing is a failure.
  bool allow_no_services = false;
  /// A manifest with warnings (unknown keys) is refused like one with problems (--strict).
  bool strict = false;
  /// Given every item a handler publishes to a subscription endpoint (service, endpoint,
  /// data), besides the subscribers here: how the daemons sharing a database hear of it.
  std::function<void(const std::string& service, std::string_view endpoint,
                     const json::value& data)>
      publish_relay;
};

/// Who made a call: told to the mutation listener with every mutation that succeeded.
struct Caller {
  std::string transport;  ///< "http", "ws", "inproc"
  std::string client;     ///< what the client calls itself (X-Hearth-Client), may be empty
  std::string mount;      ///< the view mount the call was made for, else empty
  /// The input holds values the caller may not show (a workspace's private or write-only
  /// state): listeners told of the mutation get it without its input and result.
  bool confidential = false;
  /// Told each line the handler logs while the call runs (handlers::Call::on_log): an MCP
  /// client hears them as notifications/message.
  std::function<void(std::string_view level, std::string_view message)> on_log;
};

/// A mutation endpoint that ran and succeeded: what the view host tells the views of the service
/// (as agent actions), whoever the caller was.
struct Mutation {
  std::string service;
  std::string endpoint;
  json::value input;   ///< as the handler got it (defaults applied); null when withheld
  json::value result;  ///< null when withheld
  Caller caller;
  bool withheld = false;  ///< the caller was confidential: input and result are not told
};

/// What went wrong while loading, per manifest file.
struct LoadReport {
  struct Failure {
    std::filesystem::path file;
    Problems problems;
  };
  std::vector<Failure> failures;
  std::vector<std::string> warnings;
};

/// What a reload changed (service names), and what it refused.
struct ReloadReport {
  std::vector<std::string> added;
  std::vector<std::string> removed;
  std::vector<std::string> changed;  ///< replaced by a new definition
  /// Manifests that could not be (re)loaded: a service that was served keeps its old definition.
  LoadReport problems;
  bool any_change() const { return !added.empty() || !removed.empty() || !changed.empty(); }
};

class Host {
 public:
  /// One loaded service. Immutable once served: a reload replaces the whole object, and whoever
  /// holds the shared_ptr (a call in flight, a subscription producer) keeps the old one alive.
  struct Service {
    std::filesystem::path dir;  ///< the folder it was loaded from
    std::string source;         ///< its lavs.json as read then, to tell an edit
    manifest::Manifest manifest;
    /// manifest.raw as JSON text, made once at load (lavs/manifest answers with it).
    std::shared_ptr<const std::string> manifest_text;
    std::map<std::string, std::unique_ptr<handlers::Handler>, std::less<>> handlers;
    std::shared_ptr<SubscriptionHub> hub;
  };
  using ServiceList = std::vector<std::shared_ptr<const Service>>;

  /// Loads every service found under `paths` (see manifest::discover). Returns nullptr when any
  /// manifest has a problem or no service was found: nothing is ever half served.
  static std::unique_ptr<Host> load(const std::vector<std::filesystem::path>& paths,
                                    const HostOptions& options,
                                    boost::asio::any_io_executor executor, LoadReport& report);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  /// The services served now (a snapshot: a reload does not change it).
  std::shared_ptr<const ServiceList> services() const;

  /// The service named `name`; with an empty name, the only service (error when there are several).
  Result<std::shared_ptr<const Service>> find_service(std::string_view name) const;

  /// Loads again what is under `paths`: folders with a new or edited lavs.json are (re)loaded,
  /// services whose folder or manifest is gone are removed, the others are kept as they are.
  /// A manifest with problems changes nothing (the old definition, if any, stays served) and is
  /// reported once per edit. Calls in flight finish on the definition they started with;
  /// subscriptions of a changed or removed service end with lavs/subscriptionEnded (reason
  /// "reloaded", or "removed" when the endpoint is gone). Blocking (it reads files and starts
  /// handlers): run it off the I/O threads. Reloads are serialised.
  ReloadReport reload(const std::vector<std::filesystem::path>& paths);

  /// Runs a query or mutation endpoint. `input` null means no input was given. The caller keeps
  /// `service` alive until the call returns (it holds the shared_ptr from find_service). A
  /// mutation that succeeds is told to the mutation listener with `caller`.
  boost::asio::awaitable<Result<json::value>> call(const Service& service,
                                                   std::string_view endpoint, json::value input,
                                                   Caller caller = {});

  /// Told of every mutation of a service it `wants` that succeeded, on the thread that ran the
  /// call: must not block. `wants` is asked before the call, so that the input is kept (copied)
  /// only for services somebody watches. Set before serving.
  struct MutationListener {
    std::function<bool(std::string_view service)> wants;
    std::function<void(const Mutation&)> tell;
  };
  void set_mutation_listener(MutationListener listener) { on_mutation_ = std::move(listener); }

  /// Work left for right after the caller's answer is written, in order (a transport's
  /// after-reply list).
  using AfterReply = std::vector<std::function<void()>>;

  /// Subscribes `subscriber` to a subscription endpoint and returns the subscription id. Items
  /// flow once the id has reached the client: from `after_reply` when given, else at once. The
  /// producer keeps `service` alive while it runs.
  boost::asio::awaitable<Result<std::string>> subscribe(std::shared_ptr<Subscriber> subscriber,
                                                        std::shared_ptr<const Service> service,
                                                        std::string_view endpoint,
                                                        json::value input, AfterReply* after_reply);

  /// Ends a subscription of the subscriber `subscriber_id`; false when it has none with that id.
  bool unsubscribe(std::uint64_t subscriber_id, const std::string& subscription_id);

  /// A file of `service` covered by its fileAccess, read on a blocking thread: {path, size,
  /// encoding: "utf-8" | "base64", content}.
  boost::asio::awaitable<Result<json::value>> read_file(const Service& service, std::string path);

  /// Records a call in the audit log (when there is one) before the caller answers.
  boost::asio::awaitable<void> audit(AuditRecord record);

  /// Where calls are recorded (may be null: no audit).
  void set_audit(AuditLog* audit) { audit_ = audit; }

  /// Threads for blocking work, shared by everything the daemon serves.
  BlockingExecutor& blocking() { return *blocking_; }

  /// Stops every subscription producer (daemon shutdown).
  void shutdown();

  /// True once every handler kind's warm helpers (JS worker pools) can take calls.
  bool ready() const { return registry_->ready(); }

 private:
  Host(const HostOptions& options, boost::asio::any_io_executor executor);

  /// Input defaults and validation (no input is an empty object).
  Result<json::value> prepare_input(const manifest::Endpoint& endpoint, json::value input) const;
  /// prepare_input, on a blocking thread when the input is large, so that validating it never
  /// holds an I/O thread.
  boost::asio::awaitable<Result<json::value>> prepare_input_off_io(
      const manifest::Endpoint& endpoint, json::value input);
  /// Checks a handler's result against the endpoint's output schema.
  Result<json::value> check_output(const Service& service, const manifest::Endpoint& endpoint,
                                   Result<json::value> result) const;
  /// Start-up notes on how the jail treats the permissions of `m`'s endpoints.
  std::vector<std::string> jail_notes(const manifest::Manifest& m) const;
  /// Loads the service of one folder from `source` (its lavs.json as read); nullptr with
  /// `problems` saying what is wrong with it.
  std::unique_ptr<Service> load_service(const std::filesystem::path& dir, std::string source,
                                        Problems& problems);
  std::chrono::milliseconds timeout_for(const manifest::Endpoint& endpoint) const;
  Result<json::value> read_file_now(const Service& service, std::string_view path) const;

  HostOptions options_;
  boost::asio::any_io_executor executor_;
  std::unique_ptr<handlers::Registry> registry_;
  std::unique_ptr<schema::Compiler> compiler_;
  mutable std::mutex services_mu_;
  std::shared_ptr<const ServiceList> services_;  ///< replaced whole by a reload
  std::mutex reload_mu_;
  /// Folders whose manifest failed to load, with the text that failed: reported once per edit.
  std::map<std::filesystem::path, std::string> failed_sources_;
  AuditLog* audit_ = nullptr;
  MutationListener on_mutation_;
  std::unique_ptr<BlockingExecutor> blocking_;
};

/// True when validating `v` may take long enough to keep it off the I/O threads: more than
/// `nodes` values, counting every 64 bytes of a string as one.
bool is_large(const json::value& v, std::size_t nodes = 4096);

/// Turns schema violations into the -32602 error of the call pipeline.
Error invalid_params_error(const std::vector<schema::Violation>& violations);

/// -32601 for an endpoint `m` does not have, listing those it has.
Error endpoint_not_found(const manifest::Manifest& m, std::string_view endpoint);

}  // namespace hearth::host
