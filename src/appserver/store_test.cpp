#include "appserver/store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace hearth::appserver {
namespace {

namespace fs = std::filesystem;

struct StoreTest : ::testing::Test {
  fs::path dir =
      fs::path(::testing::TempDir()) / ("hearth_appserver_" + std::to_string(::getpid()));
  std::unique_ptr<Store> store;

  void SetUp() override {
    fs::remove_all(dir);
    store = Store::open(dir / "app-server.db").value();
  }
  void TearDown() override {
    store.reset();
    fs::remove_all(dir);
  }

  SessionRecord session(const std::string& id, const std::string& key = "") {
    SessionRecord s;
    s.id = id;
    s.app = "notes";
    s.workspace = "w1";
    s.mode = "new";
    s.idempotency_key = key;
    s.created_at = "2026-11-25T00:00:00Z";
    return s;
  }

  TurnRecord turn(const std::string& id, const std::string& session, const std::string& status,
                  const std::string& key = "") {
    TurnRecord t;
    t.id = id;
    t.session = session;
    t.status = status;
    t.input = "do it";
    t.idempotency_key = key;
    t.created_at = "2026-11-25T00:00:01Z";
    return t;
  }
};

TEST_F(StoreTest, EventsAreNumberedPerSessionWithoutGaps) {
  ASSERT_TRUE(store->add_session(session("s1")).ok());
  ASSERT_TRUE(store->add_session(session("s2")).ok());
  for (int i = 0; i < 3; ++i) {
    Event e;
    e.session = i == 1 ? "s2" : "s1";
    e.type = "status";
    e.payload = json::object{{"i", i}};
    ASSERT_TRUE(store->append(e).ok());
    EXPECT_EQ(e.seq, i == 2 ? 2 : 1);
  }
  const auto events = store->events("s1", 0).value();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].seq, 1);
  EXPECT_EQ(events[1].payload.at("i"), 2);
  EXPECT_EQ(store->events("s1", 1).value().size(), 1u);
  EXPECT_EQ(store->session("s1").value()->last_seq, 2);
  Event orphan;
  orphan.session = "nobody";
  EXPECT_FALSE(store->append(orphan).ok());
}

TEST_F(StoreTest, IdempotencyKeysFindTheFirstSessionAndTurn) {
  ASSERT_TRUE(store->add_session(session("s1", "board-1")).ok());
  EXPECT_EQ(store->session_by_key("notes", "w1", "board-1").value()->id, "s1");
  EXPECT_FALSE(store->session_by_key("notes", "w2", "board-1").value().has_value());
  // The same key twice for one app and workspace adds nothing: the database decides.
  EXPECT_FALSE(store->add_session(session("s2", "board-1")).value());  // the key was used
  ASSERT_TRUE(store->add_turn(turn("t1", "s1", "queued", "k")).ok());
  EXPECT_EQ(store->turn_by_key("s1", "k").value()->id, "t1");
  EXPECT_FALSE(store->add_turn(turn("t2", "s1", "queued", "k")).value());
  // Keys are optional: many sessions without one.
  EXPECT_TRUE(store->add_session(session("s3")).value());
  EXPECT_TRUE(store->add_session(session("s4")).value());
}

TEST_F(StoreTest, TurnsKeepTheirResultAndUnfinishedOnesAreFound) {
  ASSERT_TRUE(store->add_session(session("s1")).ok());
  ASSERT_TRUE(store->add_turn(turn("t1", "s1", "running")).ok());
  ASSERT_TRUE(store->add_turn(turn("t2", "s1", "waiting")).ok());
  auto t1 = store->turn("t1").value().value();
  t1.status = "completed";
  t1.result = json::object{{"count", 2}};
  t1.ended_at = "2026-11-25T00:00:02Z";
  ASSERT_TRUE(store->update_turn(t1).ok());
  const auto back = store->turn("t1").value().value();
  EXPECT_EQ(back.result, json::value(json::object{{"count", 2}}));
  EXPECT_EQ(back.to_json().at("status"), "completed");
  const auto left = store->interrupted().value();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].id, "t2");
  EXPECT_EQ(store->turns("s1").value().size(), 2u);
}

}  // namespace
}  // namespace hearth::appserver
