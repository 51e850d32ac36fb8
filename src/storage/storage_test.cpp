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
