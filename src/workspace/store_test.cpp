#include "workspace/store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace hearth::workspace {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "hearth-store-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = Store::open(dir_ / "w.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, CommitsAreVersionedAndConflictsRefused) {
  ASSERT_TRUE(store_->reset("ws", 0, json::object{{"a", 1}, {"b", "x"}}).ok());
  HistoryEntry entry;
  entry.actor = "test";
  entry.kind = "script";
  entry.script = "a = 2";
  entry.outcome = "committed";
  entry.patch = json::array{json::object{{"op", "replace"}, {"path", "/a"}, {"value", 2}}};
  ASSERT_TRUE(store_->commit("ws", 0, {{"a", 2}}, entry).ok());
  EXPECT_EQ(entry.version, 1);
  EXPECT_EQ(entry.seq, 1);
  HistoryEntry stale = entry;
  auto st = store_->commit("ws", 0, {{"a", 3}}, stale);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kConflict);
  HistoryEntry failed;
  failed.actor = "test";
  failed.kind = "script";
  failed.outcome = "failed";
  failed.error = json::object{{"code", -32003}};
  ASSERT_TRUE(store_->record("ws", failed).ok());
  EXPECT_EQ(failed.seq, 2);

  auto snap = store_->load("ws");
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->version, 1);
  EXPECT_EQ(snap->state.at("a"), 2);
  EXPECT_EQ(snap->state.at("b"), "x");
  auto history = store_->history("ws", 0, 10);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ(history->at(0).patch, entry.patch);
  EXPECT_EQ(history->at(1).outcome, "failed");
  EXPECT_FALSE(history->at(1).version);
  auto one = store_->change("ws", 1);
  ASSERT_TRUE(one.ok() && one.value());
  EXPECT_EQ(one.value()->script, "a = 2");
  EXPECT_FALSE(store_->change("ws", 2).value());
}

TEST_F(StoreTest, ReopeningKeepsEverything) {
  ASSERT_TRUE(store_->reset("ws", 0, json::object{{"a", 1}}).ok());
  HistoryEntry entry;
  entry.actor = "t";
  entry.kind = "script";
  entry.outcome = "committed";
  ASSERT_TRUE(store_->commit("ws", 0, {{"a", 5}}, entry).ok());
  store_.reset();
  auto again = Store::open(dir_ / "w.db");
  ASSERT_TRUE(again.ok());
  auto snap = again.value()->load("ws");
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(snap->exists);
  EXPECT_EQ(snap->version, 1);
  EXPECT_EQ(snap->state.at("a"), 5);
  EXPECT_FALSE(again.value()->load("other").value().exists);
}

}  // namespace
}  // namespace hearth::workspace
