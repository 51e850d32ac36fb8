#include "storage/group_commit.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace hearth::storage {
namespace {

namespace fs = std::filesystem;

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hearth-group-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    auto db = open_sqlite(dir_ / "test.db");
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT)").ok());
    group_ = std::make_unique<GroupCommit>(*db_);
  }
  void TearDown() override {
    group_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }
  std::int64_t rows() {
    auto r = db_->query("SELECT COUNT(*) FROM t");
    return r.ok() ? std::get<std::int64_t>(r.value().at(0).at(0)) : -1;
  }
  /// Waits (bounded) until `n` writes wait for the transaction in progress.
  bool until_waiting(std::size_t n) {
    for (int i = 0; i < 10000 && group_->waiting() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return group_->waiting() >= n;
  }

  /// Inserts a row named `who`, `pad` characters longer.
  Status insert(const std::string& who, std::size_t pad = 0) {
    auto done = db_->execute("INSERT INTO t (who) VALUES (?)", {who + std::string(pad, 'x')});
    if (!done.ok()) return done.error();
    return {};
  }

  /// Runs `first`, holding its transaction until every write of `others` waits for it (each on
  /// a thread of its own), so that `others` commit as one group whatever the machine's timing.
  /// The statuses, `first`'s then the others' in order; `queued`: whether they all waited.
  std::vector<Status> first_then_group(const std::function<Status()>& first,
                                       const std::vector<std::function<Status()>>& others,
                                       bool* queued = nullptr) {
    std::vector<Status> results(others.size() + 1);
    std::atomic<bool> inside{false};
    std::atomic<bool> all_waited{false};
    std::thread leader([&] {
      const std::function<Status()> write = [&]() -> Status {
        inside = true;
        all_waited = until_waiting(others.size());
        return first();
      };
      results[0] = group_->run(write);
    });
    while (!inside) std::this_thread::yield();
    std::vector<std::thread> threads;
    threads.reserve(others.size());
    for (std::size_t i = 0; i < others.size(); ++i) {
      threads.emplace_back([&, i] { results[i + 1] = group_->run(others[i]); });
    }
    leader.join();
    for (auto& t : threads) t.join();
    if (queued != nullptr) *queued = all_waited;
    return results;
  }

  fs::path dir_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<GroupCommit> group_;
};

TEST_F(GroupCommitTest, WritesThatArriveDuringATransactionShareTheNextOne) {
  constexpr int kOthers = 7;
  std::vector<std::function<Status()>> others;
  for (int i = 1; i <= kOthers; ++i) {
    others.emplace_back([this, i] { return insert(std::to_string(i)); });
  }
  bool others_queued = false;
  const auto results = first_then_group([this] { return insert("first"); }, others, &others_queued);
  EXPECT_TRUE(others_queued);
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(rows(), kOthers + 1);
  EXPECT_EQ(group_->writes(), static_cast<std::uint64_t>(kOthers + 1));
  EXPECT_EQ(group_->transactions(), 2U);
}

TEST_F(GroupCommitTest, AFailingWriteInAGroupIsRolledBackAloneAndGetsItsOwnError) {
  std::vector<std::function<Status()>> others;
  for (int i = 1; i <= 3; ++i) {
    others.emplace_back([this, i]() -> Status {
      (void)insert(std::to_string(i));
      if (i == 2) return Error::make(ErrorCode::kConflict, "the second one's own error");
      return {};
    });
  }
  const auto results = first_then_group([this] { return insert("first"); }, others);
  EXPECT_TRUE(results[0].ok());
  EXPECT_TRUE(results[1].ok());
  ASSERT_FALSE(results[2].ok());
  EXPECT_EQ(results[2].error().code, ErrorCode::kConflict);
  EXPECT_TRUE(results[3].ok());
  auto who = db_->query("SELECT who FROM t ORDER BY id");
  ASSERT_TRUE(who.ok());
  std::vector<std::string> names;
  for (const auto& row : who.value()) names.push_back(std::get<std::string>(row.at(0)));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"1", "3", "first"}));
}

TEST_F(GroupCommitTest, AWriteOverTheQuotaInAGroupLeavesEveryWriteAsItsStatusSays) {
  // A database with a quota: the middle write of a group fills it. Whether SQLite undoes the
  // statement or the whole transaction, each write reported done is stored and each reported
  // failed is not, and the one over the quota says so.
  group_.reset();
  db_.reset();
  auto small = open_sqlite(dir_ / "small.db", SqliteOptions{.max_bytes = std::int64_t{64} * 1024});
  ASSERT_TRUE(small.ok()) << small.error().message;
  db_ = std::move(small).value();
  ASSERT_TRUE(db_->execute("CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT)").ok());
  group_ = std::make_unique<GroupCommit>(*db_);
  std::vector<std::function<Status()>> others;
  for (int i = 1; i <= 3; ++i) {
    others.emplace_back([this, i] { return insert(std::to_string(i), i == 2 ? 200 * 1024 : 10); });
  }
  const auto results = first_then_group([this] { return insert("first", 10); }, others);
  ASSERT_FALSE(results[2].ok());
  EXPECT_TRUE(quota_full(results[2].error())) << results[2].error().message;
  auto stored = db_->query("SELECT substr(who, 1, 5) FROM t");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  std::vector<std::string> names;
  for (const auto& row : stored.value()) {
    std::string who = std::get<std::string>(row.at(0));
    names.push_back(who.substr(0, who.find('x')));
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> reported;
  const std::vector<std::string> who{"first", "1", "2", "3"};
  for (std::size_t i = 0; i < 4; ++i) {
    if (results[i].ok()) reported.push_back(who[i]);
  }
  std::sort(reported.begin(), reported.end());
  EXPECT_EQ(names, reported);
}

TEST_F(GroupCommitTest, AWriteAloneIsItsOwnTransactionAndAFailedOneLeavesNothing) {
  const std::function<Status()> ok = [this] { return insert("a"); };
  const std::function<Status()> bad = [this]() -> Status {
    (void)insert("b");
    return Error::make(ErrorCode::kInvalidParams, "no");
  };
  EXPECT_TRUE(group_->run(ok).ok());
  EXPECT_FALSE(group_->run(bad).ok());
  EXPECT_EQ(rows(), 1);
  EXPECT_EQ(group_->transactions(), 2U);
}

TEST_F(GroupCommitTest, ManyThreadsLoseNoWrite) {
  constexpr int kThreads = 8;
  constexpr int kEach = 40;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        const std::function<Status()> write = [this] { return insert("x"); };
        if (!group_->run(write).ok()) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(rows(), kThreads * kEach);
  EXPECT_EQ(group_->writes(), static_cast<std::uint64_t>(kThreads * kEach));
  EXPECT_LE(group_->transactions(), group_->writes());
}

}  // namespace
}  // namespace hearth::storage
