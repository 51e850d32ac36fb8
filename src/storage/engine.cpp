// The SQLite engine, and open_engine choosing between it and PostgreSQL (postgres.cpp).
#include "storage/engine.hpp"

#include <atomic>

#include "storage/postgres.hpp"

namespace hearth::storage {
namespace {

/// A bus with no one else on it: one daemon owns a state dir.
class LocalBus final : public Bus {
 public:
  Status publish(std::string_view /*topic*/, std::string_view /*payload*/) override {
    return Status{};
  }
  std::uint64_t subscribe(std::string /*topic*/, Handler /*handler*/) override { return ++next_; }
  void unsubscribe(std::uint64_t /*id*/) override {}
  std::uint64_t on_resync(std::function<void()> /*handler*/) override { return ++next_; }

 private:
  std::atomic<std::uint64_t> next_{0};
};

class SqliteEngine final : public Engine {
 public:
  std::string_view kind() const override { return "sqlite"; }
  bool shared() const override { return false; }

  Result<std::unique_ptr<Database>> open(std::string_view /*component*/,
                                         const std::filesystem::path& sqlite_file,
                                         SqliteOptions options) override {
    return open_sqlite(sqlite_file, options);
  }

  Result<std::unique_ptr<Database>> open_app(const AppPlacement& app) override {
    if (app.placement == "server-postgresql") {
      return Error::make(ErrorCode::kInvalidParams,
                         "storage: app " + app.app +
                             ": this app's storage.placement is server-postgresql: start hearth "
                             "with --database postgresql://...");
    }
    if (!app.placement.empty() && app.placement != "local-sqlite") {
      return Error::make(ErrorCode::kInvalidParams,
                         "storage: app " + app.app + ": unknown storage.placement '" +
                             app.placement + "' (local-sqlite or server-postgresql)");
    }
    return open_sqlite(app.sqlite_file, app.sqlite);
  }

  Status drop_app(const AppPlacement& app) override {
    if (app.placement == "server-postgresql") return Status{};  // never made here
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(app.sqlite_file.string() + suffix, ec);
      if (ec) {
        return Error::make(
            ErrorCode::kInternalError,
            "storage: cannot remove " + app.sqlite_file.string() + suffix + ": " + ec.message());
      }
    }
    return Status{};
  }

  Bus& bus() override { return bus_; }
  std::string describe() const override { return "sqlite (files in the state dir)"; }

 private:
  LocalBus bus_;
};

}  // namespace

std::unique_ptr<Engine> sqlite_engine() {
  return std::make_unique<SqliteEngine>();
}

Result<std::unique_ptr<Engine>> open_engine(std::string_view url, EngineOptions options) {
  if (url.empty()) return sqlite_engine();
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return pg::open_postgres_engine(url, std::move(options));
  }
  return Error::make(ErrorCode::kInvalidParams,
                     "storage: --database '" + pg::mask_password(url) +
                         "' is not one hearth knows: leave it out for SQLite files in the state "
                         "dir, or give postgresql://[user[:password]@][host][:port]/database[?...] "
                         "(postgres:// too)");
}

}  // namespace hearth::storage
