#pragma once
/// The host: the loaded services and what is done with them, whatever the transport (the daemon,
/// `hearth call` and tests all go through it):
/// - loader.cpp: finding and loading services (Host::load);
/// - pipeline.cpp: the call pipeline (lavs-spec-v1 6.3: validate input, run the handler,
///   validate output) and subscriptions;
/// - read_file.cpp: a file of a service read on a view's behalf.
/// The JSON-RPC methods over it are in src/methods (one folder per method group).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/blocking.hpp"
#include "common/problem.hpp"
#include "common/result.hpp"
#include "handlers/handler.hpp"
#include "host/audit.hpp"
#include "host/subscriptions.hpp"
#include "manifest/manifest.hpp"
#include "rpc/dispatcher.hpp"
#include "schema/schema.hpp"

namespace hearth::host {

struct HostOptions {
  /// Time limit of a call when neither the handler nor the permissions set one.
  std::chrono::milliseconds default_timeout{30000};
  handlers::KindOptions kinds;
  /// lavs/readFile refuses larger files.
  std::size_t max_read_file_bytes = 8 * 1024 * 1024;
  /// What one connection may hold in subscriptions, per service.
  SubscriptionHub::Limits subscription_limits;
  /// Threads for blocking work (file reads, validating large values, the audit log).
  std::size_t blocking_threads = 2;
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

class Host {
 public:
  struct Service {
    manifest::Manifest manifest;
    std::map<std::string, std::unique_ptr<handlers::Handler>, std::less<>> handlers;
    std::shared_ptr<SubscriptionHub> hub;
  };

  /// Loads every service found under `paths` (see manifest::discover). Returns nullptr when any
  /// manifest has a problem or no service was found: nothing is ever half served.
  static std::unique_ptr<Host> load(const std::vector<std::filesystem::path>& paths,
                                    HostOptions options, boost::asio::any_io_executor executor,
                                    LoadReport& report);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  const std::vector<std::unique_ptr<Service>>& services() const { return services_; }

  /// The service named `name`; with an empty name, the only service (error when there are several).
  Result<const Service*> find_service(std::string_view name) const;

  /// Runs a query or mutation endpoint. `input` null means no input was given.
  boost::asio::awaitable<Result<json::value>> call(const Service& service,
                                                   std::string_view endpoint, json::value input);

  /// Subscribes `session` to a subscription endpoint and returns the subscription id. Items
  /// flow once the id has reached the client: from `after_reply` when given, else at once.
  boost::asio::awaitable<Result<std::string>> subscribe(const std::shared_ptr<rpc::Session>& session,
                                                        const Service& service,
                                                        std::string_view endpoint,
                                                        json::value input,
                                                        rpc::AfterReply* after_reply);

  /// Ends a subscription of the session `session_id`; false when it has none with that id.
  bool unsubscribe(std::uint64_t session_id, const std::string& subscription_id);

  /// A file of `service` covered by its fileAccess, read on a blocking thread: {path, size,
  /// encoding: "utf-8" | "base64", content}.
  boost::asio::awaitable<Result<json::value>> read_file(const Service& service,
                                                        std::string path);

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
  Host(HostOptions options, boost::asio::any_io_executor executor);

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
  /// Loads the service of one folder; nullptr with `problems` saying what is wrong with it.
  std::unique_ptr<Service> load_service(const std::filesystem::path& dir, Problems& problems);
  std::chrono::milliseconds timeout_for(const manifest::Endpoint& endpoint) const;
  Result<json::value> read_file_now(const Service& service, std::string_view path) const;

  HostOptions options_;
  boost::asio::any_io_executor executor_;
  std::unique_ptr<handlers::Registry> registry_;
  std::unique_ptr<schema::Compiler> compiler_;
  std::vector<std::unique_ptr<Service>> services_;
  AuditLog* audit_ = nullptr;
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
