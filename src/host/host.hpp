#pragma once
/// The host: the loaded services, the call pipeline (lavs-spec-v1 6.3: validate input, run the
/// handler, validate output), subscriptions, file reads on a view's behalf, and the LAVS JSON-RPC
/// methods. Transport independent: the daemon, `hearth call` and tests all go through it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

  /// Registers lavs/call, lavs/manifest, lavs/services, lavs/subscribe, lavs/unsubscribe and
  /// lavs/readFile on `dispatcher`. The host must outlive the dispatcher's use.
  void register_methods(rpc::Dispatcher& dispatcher);

  /// Where calls are recorded (may be null: no audit).
  void set_audit(AuditLog* audit) { audit_ = audit; }

  /// Stops every subscription producer (daemon shutdown).
  void shutdown();

  /// True once every handler kind's warm helpers (JS worker pools) can take calls.
  bool ready() const { return registry_->ready(); }

 private:
  Host(HostOptions options, boost::asio::any_io_executor executor);

  Result<json::value> prepare_input(const manifest::Endpoint& endpoint, json::value input) const;
  /// prepare_input, on the blocking-work thread when the input is large, so that validating it
  /// never holds an I/O thread.
  boost::asio::awaitable<Result<json::value>> prepare_input_off_io(const manifest::Endpoint& endpoint,
                                                                   json::value input);
  /// Checks a handler's result against the endpoint's output schema.
  Result<json::value> check_output(const Service& service, const manifest::Endpoint& endpoint,
                                   Result<json::value> result) const;
  /// Runs `work` on the blocking-work thread and resumes on the caller's executor.
  boost::asio::awaitable<Result<json::value>> run_blocking(std::function<Result<json::value>()> work);
  /// Start-up notes on how the jail treats the permissions of `m`'s endpoints.
  std::vector<std::string> jail_notes(const manifest::Manifest& m) const;
  std::chrono::milliseconds timeout_for(const manifest::Endpoint& endpoint) const;

  boost::asio::awaitable<Result<json::value>> rpc_call(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> rpc_subscribe(const rpc::Request& request);
  boost::asio::awaitable<Result<json::value>> rpc_unsubscribe(const rpc::Request& request);
  Result<json::value> read_file(const Service& service, std::string_view path) const;
  void audit(const rpc::Request& request, std::string_view service, std::string_view endpoint,
             std::chrono::steady_clock::time_point start, const std::optional<ErrorCode>& error);

  HostOptions options_;
  boost::asio::any_io_executor executor_;
  std::unique_ptr<handlers::Registry> registry_;
  std::unique_ptr<schema::Compiler> compiler_;
  std::vector<std::unique_ptr<Service>> services_;
  AuditLog* audit_ = nullptr;
  /// Work that may take long and must not run on an I/O thread (validating large values).
  std::unique_ptr<boost::asio::thread_pool> blocking_;
};

/// True when validating `v` may take long enough to keep it off the I/O threads: more than
/// `nodes` values, counting every 64 bytes of a string as one.
bool is_large(const json::value& v, std::size_t nodes = 4096);

/// Turns schema violations into the -32602 error of the call pipeline.
Error invalid_params_error(const std::vector<schema::Violation>& violations);

}  // namespace hearth::host
