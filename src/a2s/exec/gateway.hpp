#pragma once
/// The A2S gateway (docs/a2s.md): the registry the daemon serves (search, get), and the execution
/// of a capability - variables resolved from the call, the vault and defaults; auth flows run
/// first when their tokens are missing or about to expire (one refresh for any number of
/// concurrent calls); the request template filled safely; the same-domain, HTTPS and rate-limit
/// rules applied; the response mapped into output variables, matched against errorPatterns, and
/// scrubbed of every vault value before it leaves.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "a2s/exec/catalog.hpp"
#include "a2s/exec/rate_limiter.hpp"
#include "a2s/exec/stored.hpp"
#include "common/blocking.hpp"
#include "common/result.hpp"
#include "json/json.hpp"
#include "storage/engine.hpp"

namespace hearth::httpclient {
class Client;
}
namespace hearth::vault {
class Vault;
}

namespace hearth::a2s {

struct GatewayOptions {
  std::vector<std::filesystem::path> registry_dirs;
  /// Domains ("localhost:8741") the operator marks as local test domains: plain HTTP allowed, and
  /// their names may resolve to this machine. Every other domain is HTTPS only and may not
  /// resolve to a loopback, private or link-local address.
  std::vector<std::string> local_domains;
  std::chrono::milliseconds timeout{30000};  ///< one HTTP exchange
  std::size_t max_response_bytes = std::size_t{4} << 20;
  /// Longest a call waits for its rate-limit slot before answering "rate_limited".
  std::chrono::milliseconds max_rate_wait{10000};
  /// Definitions added through the daemon (registry/define); null: none can be.
  std::shared_ptr<DefinitionStore> stored;
  /// The daemons sharing the database: told of each definition added or removed here, and
  /// read again when another adds or removes one. Null or not shared: none.
  std::shared_ptr<storage::Engine> engine;
};

/// What `registry/execute` asks for.
struct ExecuteParams {
  std::string service;
  std::string capability;
  json::object variables;  ///< temporary values, and service/global values for this call
  bool dry_run = false;    ///< fill and check everything, send nothing
  bool store = false;      ///< also store the given service/global values in the vault
  std::string caller;      ///< who asked (audit)
};

/// One line for the audit log, already free of vault values.
struct AuditEntry {
  std::string service;
  std::string capability;  ///< or the variable for a vault read
  std::string action;      ///< "registry/execute", "a2s/auth", "vault/read"
  std::string outcome;     ///< "ok", "failed", "needs_input", "rate_limited", "refused", "error"
  json::object detail;
};

class Gateway {
 public:
  /// `vault` may be null (no state dir): service and global variables are then always missing.
  Gateway(boost::asio::any_io_executor executor, GatewayOptions options,
          std::shared_ptr<vault::Vault> vault, std::shared_ptr<httpclient::Client> client);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  /// Loads the registry folders and the stored definitions (blocking; at start-up).
  void load();

  /// `registry/define`: checks a definition (the same checks as a file's; kInvalidParams with
  /// its problems, and when a folder defines the service) and stores it, replacing the stored
  /// one of that serviceName; served at once here, and by every daemon of a shared database.
  /// The answer: {serviceName, replaced}.
  boost::asio::awaitable<Result<json::value>> define(json::value document);
  /// `registry/undefine`: removes a stored definition (a folder's cannot be: kInvalidParams).
  boost::asio::awaitable<Result<json::value>> undefine(std::string service);
  /// Reloads when a definition changed; requests in flight keep the definitions they started
  /// with. True when it reloaded. Blocking: call it off the I/O threads (start_watching does).
  bool reload_if_changed();
  /// Checks the folders every `interval` on the blocking thread until stop().
  void start_watching(std::chrono::milliseconds interval);
  void stop();

  std::shared_ptr<const Snapshot> snapshot() const { return catalog_.snapshot(); }

  /// `registry/search`: the spec's registry response; with `explain`, each capability's
  /// `matches` and the response's `explanation` (how the request's words were read).
  json::value search(std::string_view query, std::size_t limit, bool explain = false) const;
  /// `registry/get`: one definition as written, with where it came from; kInvalidParams when
  /// there is no such service.
  Result<json::value> get(std::string_view service) const;
  /// `registry/list`: every service (name, domain, version, capabilities) and every file that
  /// failed to load with its problems.
  json::value list() const;

  /// `registry/execute`. Outcomes a caller acts on are results with a `status`: "ok",
  /// "failed" (the service answered with an error; with the matched errorPattern's
  /// resolution), "needs_input" (the variables to ask the user for), "rate_limited"; JSON-RPC
  /// errors are for calls that cannot be made (no such service or capability, a value that
  /// does not check, a template that would be unsafe to fill: kInvalidParams; a network failure:
  /// kHandlerError; the deadline: kTimeout).
  boost::asio::awaitable<Result<json::value>> execute(ExecuteParams params);

  /// Vault access for `vault/*` methods, on the blocking thread. Null vault: kInternalError.
  std::shared_ptr<vault::Vault> vault() const { return vault_; }
  BlockingExecutor& blocking() { return blocking_; }

  void set_audit(std::function<void(const AuditEntry&)> audit) { audit_ = std::move(audit); }

  struct Call;  // one execution (gateway.cpp)
  struct Flight;

 private:
  friend struct Call;
  boost::asio::any_io_executor executor_;
  GatewayOptions options_;
  std::shared_ptr<vault::Vault> vault_;
  std::shared_ptr<httpclient::Client> client_;
  Catalog catalog_;
  RateLimiter limiter_;
  BlockingExecutor blocking_{2};
  std::function<void(const AuditEntry&)> audit_;
  std::mutex flights_mutex_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;  ///< auth flows in progress
  std::shared_ptr<struct WatchState> watch_;
  std::shared_ptr<std::function<void()>> watch_tick_;
  std::uint64_t notices_ = 0;  ///< the bus subscription (a shared engine)
  std::uint64_t resyncs_ = 0;
  /// Reads the stored definitions again and serves them (blocking).
  Status reload_stored();
  /// What bus handlers reach the gateway through: cleared when it stops.
  struct Alive {
    std::mutex mu;
    Gateway* gateway = nullptr;
  };
  std::shared_ptr<Alive> alive_;
};

}  // namespace hearth::a2s
