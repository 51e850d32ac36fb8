#include "storage/storage.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

namespace hearth::storage {
namespace {

namespace fs = std::filesystem;

struct Tmp {
  fs::path dir =
      fs::temp_directory_path() / ("hearth-storage-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
  fs::path db() const { return dir / "test.db"; }
};

std::unique_ptr<Database> open(const fs::path& file) {
  auto db = open_sqlite(file);
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().message);
  return std::move(db).value();
}

TEST(Storage, TypedValuesRoundTripAndTheFileIsPrivate) {
  Tmp tmp;
  auto db = open(tmp.db());
  ASSERT_TRUE(db->execute("CREATE TABLE t (a, b, c, d, e)").ok());
  const Row row = {nullptr, std::int64_t{-7}, 2.5, std::string("text é"),
                   Blob{std::string("\0\x01", 2)}};
  ASSERT_EQ(db->execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row).value(), 1);
  auto rows = db->query("SELECT a, b, c, d, e FROM t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->at(0), row);
  struct stat st {};
  ASSERT_EQ(::stat(tmp.db().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto mode = db->query("PRAGMA journal_mode");
  EXPECT_EQ(std::get<std::string>(mode->at(0).at(0)), "wal");
}

TEST(Storage, ErrorsAreValues) {
  Tmp tmp;
  auto db = open(tmp.db());
  auto bad = db->execute("NOT SQL");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("syntax error"), std::string::npos);
  auto params = db->query("SELECT ?", {});
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.error().message.find("1 parameters, 0 given"), std::string::npos);
  std::FILE* f = std::fopen((tmp.dir / "junk.db").c_str(), "w");
  std::fputs("this is not a database file at all, not even close to one.........", f);
  std::fclose(f);
  EXPECT_FALSE(open_sqlite(tmp.dir / "junk.db").ok());
}

TEST(Storage, TransactionsRollBackUnlessCommitted) {
  Tmp tmp;
  auto db = open(tmp.db());
  ASSERT_TRUE(db->execute("CREATE TABLE t (x INTEGER)").ok());
  {
    auto tx = db->begin();
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db->execute("INSERT INTO t VALUES (1)").ok());
  }  // dropped: rolled back
  EXPECT_TRUE(db->query("SELECT x FROM t")->empty());
  {
    auto tx = db->begin();
    ASSERT_TRUE(db->execute("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx.value()->commit().ok());
    EXPECT_FALSE(tx.value()->commit().ok());
  }
  EXPECT_EQ(db->query("SELECT x FROM t")->size(), 1u);
}

TEST(Storage, MigrationsApplyOnceAndAtomically) {
  Tmp tmp;
  std::vector<Migration> migrations = {{1, "CREATE TABLE a (x); CREATE TABLE b (y);"},
                                       {2, "ALTER TABLE a ADD COLUMN z"}};
  {
    auto db = open(tmp.db());
    ASSERT_TRUE(db->migrate("thing", migrations).ok());
    ASSERT_TRUE(db->migrate("thing", migrations).ok());  // nothing to do
    // A failing migration leaves nothing behind: not its table, not its record.
    migrations.push_back({3, "CREATE TABLE c (x); THIS IS NOT SQL;"});
    auto failed = db->migrate("thing", migrations);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find("thing migration 3 failed"), std::string::npos);
    EXPECT_TRUE(db->query("SELECT name FROM sqlite_master WHERE name = 'c'")->empty());
    migrations.back().sql = "CREATE TABLE c (x)";
    ASSERT_TRUE(db->migrate("thing", migrations).ok());
    auto versions = db->query(
        "SELECT version FROM schema_migrations WHERE component = 'thing' ORDER BY version");
    EXPECT_EQ(versions->size(), 3u);
  }
  // An older hearth refuses a newer database.
  auto db = open(tmp.db());
  auto refused = db->migrate("thing", {{1, "CREATE TABLE a (x)"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("newer than this hearth knows"), std::string::npos);
}

TEST(Storage, TwoConnectionsWaitForEachOther) {
  Tmp tmp;
  auto a = open(tmp.db());
  auto b = open(tmp.db());
  ASSERT_TRUE(a->execute("CREATE TABLE t (x INTEGER)").ok());
  auto tx = a->begin();
  ASSERT_TRUE(tx.ok());
  ASSERT_TRUE(a->execute("INSERT INTO t VALUES (1)").ok());
  std::thread commit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(tx.value()->commit().ok());
  });
  // b's write waits for a's transaction (busy timeout) instead of failing.
  EXPECT_TRUE(b->execute("INSERT INTO t VALUES (2)").ok());
  commit.join();
  EXPECT_EQ(b->query("SELECT x FROM t")->size(), 2u);
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
