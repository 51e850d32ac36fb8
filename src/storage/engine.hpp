#pragma once
/// Where the daemon's components keep what they store (docs/deployment.md): an `Engine` is the
/// one database server (or folder of SQLite files) the daemon was configured with, and a `Bus`
/// carries "something changed" notices between the daemons that share it.
///
/// - SQLite (the default, `--database` not given): each component's database is a file under
///   the state dir, as it always was; one daemon owns a state dir (its lock), so the bus
///   carries nothing.
/// - PostgreSQL (`--database postgresql://...`): each component's tables live in a schema of
///   their own (`hearth_<component>`) of one database that several daemons may share; the bus
///   is LISTEN/NOTIFY on one channel, so a change one daemon commits reaches the others, which
///   read the new state from the database (a notice says only what changed, never the data).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "storage/storage.hpp"

namespace hearth::storage {

/// A change another daemon committed: `topic` names what ("workspace", "appserver.event",
/// "apps", "registry", "lavs.publish"), `payload` which one (a small JSON text, < 7,000 bytes).
struct Notice {
  std::string topic;
  std::string payload;
};

/// Notices between the daemons of one database. Thread-safe. Handlers run on the bus's own
/// thread: they post to their component's executor and return at once.
class Bus {
 public:
  using Handler = std::function<void(const Notice&)>;
  virtual ~Bus() = default;

  /// Tells every other daemon on the database; the sender's own handlers are not called. Sent
  /// after the change it tells of has committed. Best effort: a daemon that is not connected
  /// when it is sent never sees it, and is told to `resync` when it connects again.
  virtual Status publish(std::string_view topic, std::string_view payload) = 0;
  /// Calls `handler` with every notice of `topic` from another daemon; the id ends it.
  virtual std::uint64_t subscribe(std::string topic, Handler handler) = 0;
  /// Ends a subscribe() or on_resync() by its id; a handler already called may still be running
  /// (handlers reach their component through something the component clears when it goes).
  virtual void unsubscribe(std::uint64_t id) = 0;
  /// Calls `handler` after the bus lost its connection and has it again: notices may have been
  /// missed, so what is cached must be read again.
  virtual std::uint64_t on_resync(std::function<void()> handler) = 0;
};

/// Where an Agent App's own tables go (the package's `storage` block, docs/agent-apps.md).
struct AppPlacement {
  std::string app;        ///< the app's name
  std::string placement;  ///< "local-sqlite" (also: none given) or "server-postgresql"
  /// "per-app-database", "per-app-schema", "per-tenant-schema" or "dedicated-database". On
  /// server-postgresql, per-app-database and per-app-schema (and none given) are one schema
  /// `hearth_app_<name>`; per-tenant-schema is `hearth_app_<name>__<tenant>`; dedicated-database
  /// is a database `hearth_app_<name>` with that schema in it.
  std::string isolation;
  std::string tenant;                 ///< per-tenant-schema: the tenant (empty: the default one)
  std::filesystem::path sqlite_file;  ///< local-sqlite: the app's file
  /// local-sqlite: its quota. (PostgreSQL enforces no quota: SqliteOptions::max_bytes means
  /// nothing on server-postgresql, nor for components' databases there.)
  SqliteOptions sqlite;
};

class Engine {
 public:
  virtual ~Engine() = default;

  /// "sqlite" or "postgresql".
  virtual std::string_view kind() const = 0;
  /// Whether other daemons may share what this engine stores (PostgreSQL): a component then
  /// reads state it caches again when a notice says another daemon changed it.
  virtual bool shared() const = 0;
  /// A component's database: on SQLite the file `sqlite_file` (made 0600, with `options`); on
  /// PostgreSQL the schema `hearth_<component>` (made if missing), every statement of this
  /// Database running with it first on the search path.
  virtual Result<std::unique_ptr<Database>> open(std::string_view component,
                                                 const std::filesystem::path& sqlite_file,
                                                 SqliteOptions options = {}) = 0;
  /// An Agent App's database. local-sqlite: the file, on either engine. server-postgresql (only
  /// on PostgreSQL; SQLite refuses it with an error saying so): a role and a schema of the
  /// app's own (per tenant for per-tenant-schema; a database of its own for
  /// dedicated-database), made at the first open. `query_untrusted` and
  /// `execute_untrusted_script` run as the app's role, which is granted nothing outside its
  /// schema, so the database itself refuses the app's SQL anything of another app or of hearth;
  /// `execute`/`query` are hearth's own (its records of the app, its migration records).
  virtual Result<std::unique_ptr<Database>> open_app(const AppPlacement& app) = 0;
  /// Removes an app's database: its file, or its schema(s), role and dedicated database.
  virtual Status drop_app(const AppPlacement& app) = 0;

  virtual Bus& bus() = 0;
  /// The configured location, with any password masked (logs, `hearth status`).
  virtual std::string describe() const = 0;
};

/// The SQLite engine: files under the components' own paths, a bus that carries nothing.
std::unique_ptr<Engine> sqlite_engine();

struct EngineOptions {
  /// Secret from which the password of each app's PostgreSQL role is derived (HMAC-SHA256 of
  /// the role's name), so that every daemon holding the same key (the vault's master key) can
  /// log in as it and nothing needs storing.
  std::string app_role_secret;
};

/// Opens the engine named by `url`: empty -> SQLite; `postgresql://...` or `postgres://...` (a
/// libpq connection URI) -> PostgreSQL, connected and checked now (an unreachable server or a
/// refused login is an error naming the server, never a password).
Result<std::unique_ptr<Engine>> open_engine(std::string_view url, EngineOptions options = {});

}  // namespace hearth::storage
