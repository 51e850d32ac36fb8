#include "storage/storage.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "storage/engine.hpp"
#include "storage/testing/pg_server.hpp"

namespace hearth::storage {
namespace {

namespace fs = std::filesystem;

struct Tmp {
  fs::path dir = fs::temp_directory_path() /
                 ("hearth-storage-" + std::to_string(::getpid()) + "-" + test_name());
  static std::string test_name() {  // "Name/sqlite" for a parameterised test: one folder
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');
    return name;
  }
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
  fs::path db() const { return dir / "test.db"; }
};

std::unique_ptr<Database> open(const fs::path& file) {
  auto db = open_sqlite(file);
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().message);
  return std::move(db).value();
}

/// The Database contract, on each engine: "sqlite" (a file) or "postgresql" (a schema of a
/// fresh database on the test's own server).
class Contract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      engine_ = sqlite_engine();
    } else {
      auto* server = testing::shared_pg_server();
      ASSERT_NE(server, nullptr);
      auto name =
          server->fresh_database(::testing::UnitTest::GetInstance()->current_test_info()->name());
      ASSERT_TRUE(name.ok()) << name.error().message;
      auto engine = open_engine(server->url(*name));
      ASSERT_TRUE(engine.ok()) << engine.error().message;
      engine_ = std::move(engine).value();
    }
  }

  std::unique_ptr<Database> open() {
    auto db = engine_->open("contract", tmp_.db());
    EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().message);
    return db.ok() ? std::move(db).value() : nullptr;
  }

  bool has_table(Database& db, const std::string& name) {
    auto rows = GetParam() == "sqlite"
                    ? db.query("SELECT name FROM sqlite_master WHERE name = ?", {name})
                    : db.query(
                          "SELECT tablename FROM pg_tables WHERE schemaname = "
                          "current_schema() AND tablename = ?",
                          {name});
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    return rows.ok() && !rows->empty();
  }

  Tmp tmp_;
  std::unique_ptr<Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(Engines, Contract, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& param_info) { return param_info.param; });

TEST_P(Contract, TypedValuesRoundTrip) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  // Typed columns (PostgreSQL needs them), through a migration, which translates SQLite's names.
  ASSERT_TRUE(
      db->migrate("t", {{1, "CREATE TABLE t (a TEXT, b INTEGER, c REAL, d TEXT, e BLOB)"}}).ok());
  const Row row = {nullptr, std::int64_t{-7}, 2.5, std::string("text é 'quoted' ?"),
                   Blob{std::string("\0\x01\xff", 3)}};
  ASSERT_EQ(db->execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row).value(), 1);
  ASSERT_EQ(db->execute("INSERT INTO t (b, c) VALUES (?, ?)", {std::int64_t{9007199254740993}, 0.1})
                .value(),
            1);
  auto rows = db->query("SELECT a, b, c, d, e FROM t ORDER BY b");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->at(0), row);
  EXPECT_EQ(std::get<std::int64_t>(rows->at(1).at(1)), 9007199254740993);
  EXPECT_EQ(std::get<double>(rows->at(1).at(2)), 0.1);
  EXPECT_EQ(db->execute("UPDATE t SET a = 'x'").value(), 2);
}

TEST_P(Contract, AQuestionMarkInAStringIsNotAParameter) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->migrate("t", {{1, "CREATE TABLE t (a TEXT, b TEXT)"}}).ok());
  ASSERT_TRUE(
      db->execute("INSERT INTO t VALUES ('what?', ?) -- a comment?", {std::string("b")}).ok());
  auto rows = db->query("SELECT a, b, '?' FROM t WHERE b = ? /* and? */", {std::string("b")});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0), (Row{std::string("what?"), std::string("b"), std::string("?")}));
}

TEST_P(Contract, ErrorsAreValues) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  auto bad = db->execute("NOT SQL");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("syntax error"), std::string::npos) << bad.error().message;
  auto params = db->query("SELECT ?", {});
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.error().message.find("1 parameters, 0 given"), std::string::npos);
  // hearth's own databases run no outside SQL on PostgreSQL (only an app's database does).
  if (GetParam() == "postgresql") {
    const auto outside = db->query_untrusted("SELECT 1", {});
    ASSERT_FALSE(outside.ok());
    EXPECT_EQ(outside.error().code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(db->execute_untrusted_script("SELECT 1").error().code, ErrorCode::kPermissionDenied);
  }
}

TEST_P(Contract, AUniqueViolationIsAConflictOnPostgresql) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->migrate("t", {{1, "CREATE TABLE t (k TEXT PRIMARY KEY)"}}).ok());
  ASSERT_TRUE(db->execute("INSERT INTO t VALUES ('a')").ok());
  const auto again = db->execute("INSERT INTO t VALUES ('a')");
  ASSERT_FALSE(again.ok());
  if (GetParam() == "postgresql") {
    EXPECT_EQ(again.error().code, ErrorCode::kConflict) << again.error().message;
    EXPECT_NE(again.error().message.find("23505"), std::string::npos) << again.error().message;
  }
  // ON CONFLICT is the way to say "once" on both.
  EXPECT_EQ(db->execute("INSERT INTO t VALUES ('a') ON CONFLICT (k) DO NOTHING").value(), 0);
}

TEST_P(Contract, TransactionsRollBackUnlessCommitted) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->migrate("t", {{1, "CREATE TABLE t (x INTEGER)"}}).ok());
  {
    auto tx = db->begin();
    ASSERT_TRUE(tx.ok()) << tx.error().message;
    ASSERT_TRUE(db->execute("INSERT INTO t VALUES (1)").ok());
    EXPECT_EQ(db->query("SELECT x FROM t")->size(), 1u);  // this thread sees its own write
  }                                                       // dropped: rolled back
  EXPECT_TRUE(db->query("SELECT x FROM t")->empty());
  {
    auto tx = db->begin();
    ASSERT_TRUE(db->execute("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx.value()->commit().ok());
    EXPECT_FALSE(tx.value()->commit().ok());
  }
  EXPECT_EQ(db->query("SELECT x FROM t")->size(), 1u);
}

TEST_P(Contract, MigrationsApplyOnceAndAtomically) {
  std::vector<Migration> migrations = {{1, "CREATE TABLE a (x INTEGER); CREATE TABLE b (y TEXT);"},
                                       {2, "ALTER TABLE a ADD COLUMN z TEXT"}};
  {
    auto db = open();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->migrate("thing", migrations).ok());
    ASSERT_TRUE(db->migrate("thing", migrations).ok());  // nothing to do
    // A failing migration leaves nothing behind: not its table, not its record.
    migrations.push_back({3, "CREATE TABLE c (x INTEGER); THIS IS NOT SQL;"});
    auto failed = db->migrate("thing", migrations);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find("thing migration 3 failed"), std::string::npos);
    EXPECT_FALSE(has_table(*db, "c"));
    migrations.back().sql = "CREATE TABLE c (x INTEGER)";
    ASSERT_TRUE(db->migrate("thing", migrations).ok());
    EXPECT_TRUE(has_table(*db, "c"));
    auto versions = db->query(
        "SELECT version FROM schema_migrations WHERE component = 'thing' ORDER BY version");
    EXPECT_EQ(versions->size(), 3u);
  }
  // An older hearth refuses a newer database.
  auto db = open();
  ASSERT_NE(db, nullptr);
  auto refused = db->migrate("thing", {{1, "CREATE TABLE a (x INTEGER)"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("newer than this hearth knows"), std::string::npos);
}

TEST_P(Contract, AMigrationMayNameItsPostgresqlForm) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  Migration m{1, "CREATE TABLE t (x INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT)"};
  m.postgres = "CREATE TABLE t (x BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at TEXT)";
  ASSERT_TRUE(db->migrate("t", {m}).ok());
  ASSERT_TRUE(db->execute("INSERT INTO t (at) VALUES ('now')").ok());
  ASSERT_TRUE(db->execute("INSERT INTO t (at) VALUES ('then')").ok());
  EXPECT_EQ(std::get<std::int64_t>(db->query("SELECT max(x) FROM t")->at(0).at(0)), 2);
}

TEST_P(Contract, TwoConnectionsWaitForEachOther) {
  auto a = open();
  auto b = open();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->migrate("t", {{1, "CREATE TABLE t (x INTEGER)"}}).ok());
  auto tx = a->begin();
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(a->execute("INSERT INTO t VALUES (1)").ok());
  std::thread commit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(tx.value()->commit().ok());
  });
  // b's write waits for a's transaction (busy timeout) or goes beside it (PostgreSQL).
  EXPECT_TRUE(b->execute("INSERT INTO t VALUES (2)").ok());
  commit.join();
  EXPECT_EQ(b->query("SELECT x FROM t")->size(), 2u);
}

TEST_P(Contract, ThreadsShareADatabase) {
  auto db = open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->migrate("t", {{1, "CREATE TABLE t (thread INTEGER, i INTEGER)"}}).ok());
  std::vector<std::thread> threads;
  threads.reserve(6);
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        if (i % 5 == 0) {  // some in transactions, some not
          auto tx = db->begin();
          ASSERT_TRUE(tx.ok()) << tx.error().message;
          ASSERT_TRUE(
              db->execute("INSERT INTO t VALUES (?, ?)", {std::int64_t{t}, std::int64_t{i}}).ok());
          ASSERT_TRUE(tx.value()->commit().ok());
        } else {
          ASSERT_TRUE(
              db->execute("INSERT INTO t VALUES (?, ?)", {std::int64_t{t}, std::int64_t{i}}).ok());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::get<std::int64_t>(db->query("SELECT count(*) FROM t")->at(0).at(0)), 120);
}

TEST(Storage, TheFileIsPrivateAndInWalMode) {
  Tmp tmp;
  auto db = open(tmp.db());
  ASSERT_TRUE(db->execute("CREATE TABLE t (a, b, c, d, e)").ok());
  struct stat st {};
  ASSERT_EQ(::stat(tmp.db().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto mode = db->query("PRAGMA journal_mode");
  EXPECT_EQ(std::get<std::string>(mode->at(0).at(0)), "wal");
}

TEST(Storage, UntypedColumnsRoundTripOnSqlite) {
  Tmp tmp;
  auto db = open(tmp.db());
  ASSERT_TRUE(db->execute("CREATE TABLE t (a, b, c, d, e)").ok());
  const Row row = {nullptr, std::int64_t{-7}, 2.5, std::string("text é"),
                   Blob{std::string("\0\x01", 2)}};
  ASSERT_EQ(db->execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row).value(), 1);
  auto rows = db->query("SELECT a, b, c, d, e FROM t");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(0), row);
}

TEST(Storage, AFileThatIsNoDatabaseIsRefused) {
  Tmp tmp;
  std::FILE* f = std::fopen((tmp.dir / "junk.db").c_str(), "w");
  std::fputs("this is not a database file at all, not even close to one.........", f);
  std::fclose(f);
  EXPECT_FALSE(open_sqlite(tmp.dir / "junk.db").ok());
}

TEST(SqliteEngine, OpensFilesAndRefusesServerPostgresqlApps) {
  Tmp tmp;
  auto engine = open_engine("");
  ASSERT_TRUE(engine.ok());
  EXPECT_EQ((*engine)->kind(), "sqlite");
  EXPECT_FALSE((*engine)->shared());
  EXPECT_TRUE((*engine)->bus().publish("apps", "{}").ok());
  AppPlacement app{"notes", "server-postgresql", "per-app-schema", "", tmp.dir / "notes.db", {}};
  const auto refused = (*engine)->open_app(app);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("start hearth with --database postgresql://"),
            std::string::npos);
  app.placement = "local-sqlite";
  auto db = (*engine)->open_app(app);
  ASSERT_TRUE(db.ok()) << db.error().message;
  ASSERT_TRUE((*db)->execute_untrusted_script("CREATE TABLE n (x INTEGER);").ok());
  db->reset();
  EXPECT_TRUE(fs::exists(app.sqlite_file));
  ASSERT_TRUE((*engine)->drop_app(app).ok());
  EXPECT_FALSE(fs::exists(app.sqlite_file));
  EXPECT_FALSE(fs::exists(app.sqlite_file.string() + "-wal"));
  const auto unknown = open_engine("mysql://somewhere/db");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("postgresql://"), std::string::npos);
}

}  // namespace
}  // namespace hearth::storage

namespace hearth::storage {
namespace {

std::unique_ptr<Database> open_temp(const char* name, SqliteOptions options = {}) {
  const auto file = std::filesystem::path(::testing::TempDir()) /
                    (std::string(name) + "-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(file);
  auto db = open_sqlite(file, options);
  EXPECT_TRUE(db.ok()) << db.error().message;
  return std::move(db.value());
}

TEST(UntrustedSql, RunsTheAppsOwnStatements) {
  auto db = open_temp("untrusted-own");
  ASSERT_TRUE(db->execute_untrusted_script(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);\n"
                    "-- a comment\nINSERT INTO notes (text) VALUES ('a'); INSERT INTO notes "
                    "(text) VALUES ('b');")
                  .ok());
  auto rows =
      db->query_untrusted("SELECT text FROM notes WHERE id > ? ORDER BY id", {std::int64_t{0}});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows.value().size(), 2u);
  EXPECT_EQ(std::get<std::string>(rows.value()[1][0]), "b");
  EXPECT_TRUE(db->query_untrusted("PRAGMA table_info(notes)", {}).ok());
}

TEST(UntrustedSql, RefusesWhatCouldReachBeyondTheAppsTables) {
  auto db = open_temp("untrusted-refused");
  ASSERT_TRUE(db->migrate("hearth", {{1, "CREATE TABLE hearth_kv (k TEXT, v TEXT);"}}).ok());
  ASSERT_TRUE(db->execute_untrusted_script("CREATE TABLE notes (text TEXT);").ok());
  const auto other = std::filesystem::path(::testing::TempDir()) / "untrusted-other.db";
  for (const std::string& sql :
       {"ATTACH DATABASE '" + other.string() + "' AS other", std::string("DETACH DATABASE main"),
        std::string("PRAGMA writable_schema = 1"), std::string("PRAGMA journal_mode = DELETE"),
        std::string("SELECT load_extension('/tmp/evil.so')"), std::string("BEGIN"),
        std::string("SAVEPOINT s"), std::string("SELECT * FROM hearth_kv"),
        std::string("INSERT INTO hearth_kv VALUES ('k', 'v')"),
        std::string("DELETE FROM schema_migrations"), std::string("DROP TABLE hearth_kv"),
        std::string("CREATE TRIGGER t AFTER INSERT ON hearth_kv BEGIN SELECT 1; END"),
        std::string("PRAGMA table_info(hearth_kv)"),
        std::string("ALTER TABLE hearth_kv RENAME TO mine"),
        std::string("ALTER TABLE hearth_kv ADD COLUMN extra TEXT"),
        std::string("CREATE INDEX mine ON hearth_kv (k)"),
        std::string("CREATE TEMP TABLE hearth_shadow (x)"), std::string("ANALYZE hearth_kv"),
        std::string("CREATE VIRTUAL TABLE f USING fts5(x)")}) {
    const auto r = db->query_untrusted(sql, {});
    EXPECT_FALSE(r.ok()) << sql;
  }
  EXPECT_FALSE(std::filesystem::exists(other));
  ASSERT_TRUE(db->query("INSERT INTO hearth_kv VALUES ('k', 'v')", {}).ok());
  // A view or trigger that reaches hearth's tables is refused when it is used.
  ASSERT_TRUE(db->query_untrusted("CREATE VIEW v AS SELECT * FROM hearth_kv", {}).ok());
  EXPECT_FALSE(db->query_untrusted("SELECT * FROM v", {}).ok());
  ASSERT_TRUE(db->query_untrusted(
                    "CREATE TRIGGER t AFTER INSERT ON notes BEGIN DELETE FROM hearth_kv; END", {})
                  .ok());
  EXPECT_FALSE(db->query_untrusted("INSERT INTO notes VALUES ('x')", {}).ok());
  EXPECT_EQ(std::get<std::int64_t>(db->query("SELECT count(*) FROM hearth_kv", {}).value()[0][0]),
            1);
  ASSERT_TRUE(db->query_untrusted("DROP TRIGGER t", {}).ok());
  EXPECT_TRUE(db->query_untrusted("INSERT INTO notes VALUES ('x')", {}).ok());
  // One statement a call: a second one is not run.
  const auto two = db->query_untrusted("SELECT 1; DELETE FROM notes", {});
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(std::get<std::int64_t>(db->query("SELECT count(*) FROM notes", {}).value()[0][0]), 1);
  // A refused script stops at the refused statement.
  EXPECT_FALSE(db->execute_untrusted_script("INSERT INTO notes VALUES ('y'); PRAGMA "
                                            "writable_schema = 1; INSERT INTO notes VALUES ('z');")
                   .ok());
}

TEST(UntrustedSql, AQuotaStopsAWriteThatWouldPassIt) {
  SqliteOptions options;
  options.max_bytes = std::int64_t{64} * 1024;
  auto db = open_temp("untrusted-quota", options);
  ASSERT_TRUE(db->execute_untrusted_script("CREATE TABLE blobs (b BLOB);").ok());
  Status last;
  for (int i = 0; i < 40 && last.ok(); ++i) {
    auto r = db->query_untrusted("INSERT INTO blobs VALUES (?)", {Blob{std::string(8192, 'x')}});
    if (!r.ok()) last = std::move(r).error();
  }
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.error().message.find("quota"), std::string::npos) << last.error().message;
  EXPECT_TRUE(quota_full(last.error())) << last.error().message;
}

TEST(Sqlite, AWritePastTheQuotaSaysSoInItsData) {
  SqliteOptions options;
  options.max_bytes = std::int64_t{64} * 1024;
  auto db = open_temp("own-quota", options);
  ASSERT_TRUE(db->execute("CREATE TABLE blobs (b BLOB)", {}).ok());
  Status last;
  for (int i = 0; i < 40 && last.ok(); ++i) {
    auto r = db->execute("INSERT INTO blobs VALUES (?)", {Blob{std::string(8192, 'x')}});
    if (!r.ok()) last = std::move(r).error();
  }
  ASSERT_FALSE(last.ok());
  EXPECT_TRUE(quota_full(last.error())) << last.error().message;
  EXPECT_EQ(last.error().data.at("reason").as_string(), kQuotaReason);
  // Other failures carry no reason, whatever their message says.
  const auto missing = db->execute("INSERT INTO full_tables VALUES (1)", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("full"), std::string::npos) << missing.error().message;
  EXPECT_FALSE(quota_full(missing.error()));
}

}  // namespace
}  // namespace hearth::storage
