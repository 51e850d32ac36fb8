#pragma once
/// A throwaway PostgreSQL server for tests: initdb into a temporary folder, listening on a Unix
/// socket in that folder only (no TCP), fsync off; stopped and removed when destroyed. Needs the
/// server binaries (Debian's postgresql-15, installed by scripts/install-deps.sh); the Debian
/// system cluster that package starts is never used.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace hearth::storage::testing {

class PgServer {
 public:
  /// initdb and start (about a second). As root, through `runuser -u postgres` (initdb refuses
  /// root) with the folder given to that user.
  static Result<std::unique_ptr<PgServer>> start();
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  /// postgresql://hearth_admin@/<database>?host=<folder>&port=<port> (hearth_admin is the
  /// superuser the cluster was made with, trusted without a password).
  std::string url(std::string_view database = "postgres") const;
  /// A database of its own for a test: made now, named after `hint` and a counter.
  Result<std::string> fresh_database(std::string_view hint);
  /// Runs SQL through psql as hearth_admin (set-up and checks of what hearth made).
  Result<std::string> psql(std::string_view database, std::string_view sql) const;
  /// Stops the server (`pg_ctl stop -m fast`: connections are ended) and starts it again.
  Status stop();
  Status start_again();

  const std::filesystem::path& dir() const { return dir_; }

 private:
  PgServer() = default;
  Result<std::string> run(const std::string& command) const;

  std::filesystem::path bin_;
  std::filesystem::path dir_;
  int port_ = 0;
  bool as_postgres_ = false;  ///< root: run the server as the postgres user
  bool running_ = false;
  int databases_ = 0;
};

/// The one server of this test process, started at the first call (so test processes that
/// need none never pay for it) and stopped by `PgServerEnvironment`, or at exit. Null, with a
/// test failure saying why, when it cannot start (no PostgreSQL: run scripts/install-deps.sh).
PgServer* shared_pg_server();

/// Stops the shared server after the last test: register it with
/// `::testing::AddGlobalTestEnvironment(new PgServerEnvironment)`.
class PgServerEnvironment : public ::testing::Environment {
 public:
  void TearDown() override;
};

}  // namespace hearth::storage::testing
