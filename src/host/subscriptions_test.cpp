#include "host/subscriptions.hpp"

#include <gtest/gtest.h>

#include <mutex>

#include "host/subscriber.hpp"

namespace hearth::host {
namespace {

/// A producer the test drives by hand.
struct FakeStream : handlers::Stream {
  handlers::StreamSink sink;
  bool closed = false;
  void close() override { closed = true; }
};

/// A subscriber that records what it is told.
struct Recorder {
  std::shared_ptr<LocalSubscriber> subscriber;
  /// (subscription id, "data:<value>" or "ended:<reason>"), in order.
  std::shared_ptr<std::vector<std::pair<std::string, std::string>>> told =
      std::make_shared<std::vector<std::pair<std::string, std::string>>>();
  Recorder() {
    auto out = told;
    subscriber = std::make_shared<LocalSubscriber>(
        [out](const std::string& id, const SubscriptionItem& item) {
          EXPECT_EQ(item.text, json::dump(item.data));
          out->emplace_back(id, "data:" + item.text);
        },
        [out](const std::string& id, std::string_view reason, const std::optional<Error>&) {
          out->emplace_back(id, "ended:" + std::string(reason));
        });
  }
  /// What subscription `id` was told.
  std::vector<std::string> seen(const std::string& id) const {
    std::vector<std::string> out;
    for (const auto& [sub, what] : *told) {
      if (sub == id) out.push_back(what);
    }
    return out;
  }
};

class HubTest : public ::testing::Test {
 protected:
  HubTest() { hub_->set_endpoints({"updates"}); }

  SubscriptionHub::OpenFn opener() {
    return [this](handlers::StreamSink sink) -> Result<std::shared_ptr<handlers::Stream>> {
      auto stream = std::make_shared<FakeStream>();
      stream->sink = std::move(sink);
      streams_.push_back(stream);
      return std::shared_ptr<handlers::Stream>(stream);
    };
  }
  std::string subscribe(Recorder& r, const json::value& input = json::object{},
                        bool shared = true) {
    auto id = hub_->subscribe(r.subscriber, "updates", input, opener(), shared);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    return id.ok() ? *id : std::string();
  }

  std::shared_ptr<SubscriptionHub> hub_ = std::make_shared<SubscriptionHub>(
      "svc", SubscriptionHub::Limits{.producers_per_session = 3, .subscriptions_per_session = 5});
  std::vector<std::shared_ptr<FakeStream>> streams_;
};

TEST_F(HubTest, ALateSubscriberGetsTheCurrentStateFirst) {
  Recorder first, late;
  auto a = subscribe(first);
  hub_->activate(a);
  streams_[0]->sink.on_data(json::value(1));
  streams_[0]->sink.on_data(json::value(2));
  auto b = subscribe(late);
  ASSERT_EQ(streams_.size(), 1u);  // shared
  // Nothing reaches the late subscriber before its id is out (activate), and what came
  // meanwhile follows the snapshot in order.
  streams_[0]->sink.on_data(json::value(3));
  EXPECT_TRUE(late.seen(b).empty());
  hub_->activate(b);
  EXPECT_EQ(late.seen(b), (std::vector<std::string>{"data:2", "data:3"}));
  hub_->publish("updates", json::value("event"));
  EXPECT_EQ(late.seen(b), (std::vector<std::string>{"data:2", "data:3", "data:\"event\""}));
  EXPECT_EQ(first.seen(a),
            (std::vector<std::string>{"data:1", "data:2", "data:3", "data:\"event\""}));
}

TEST_F(HubTest, AnEndWhileHeldIsToldAfterActivation) {
  Recorder r;
  auto id = subscribe(r);
  streams_[0]->sink.on_data(json::value("snap"));
  streams_[0]->sink.on_end(std::nullopt);
  EXPECT_TRUE(r.seen(id).empty());
  hub_->activate(id);
  EXPECT_EQ(r.seen(id), (std::vector<std::string>{"data:\"snap\"", "ended:completed"}));
  EXPECT_EQ(hub_->subscriber_count(), 0u);
  EXPECT_EQ(hub_->producer_count(), 0u);
}

// A reload ends everything with the reason it gives per endpoint: active subscribers are told
// at once, held ones at activation; producers stop, and the hub takes no new subscriber.
TEST_F(HubTest, EndAllTellsEverySubscriberAndRefusesNewOnes) {
  Recorder active, held;
  auto a = subscribe(active);
  hub_->activate(a);
  auto h = subscribe(held, json::object{{"other", true}});
  ASSERT_EQ(streams_.size(), 2u);
  hub_->end_all([](std::string_view endpoint) {
    return endpoint == "updates" ? std::string("reloaded") : std::string("removed");
  });
  EXPECT_EQ(active.seen(a), (std::vector<std::string>{"ended:reloaded"}));
  EXPECT_TRUE(held.seen(h).empty());
  EXPECT_TRUE(streams_[0]->closed);
  EXPECT_TRUE(streams_[1]->closed);
  EXPECT_EQ(hub_->producer_count(), 0u);
  hub_->activate(h);
  EXPECT_EQ(held.seen(h), (std::vector<std::string>{"ended:reloaded"}));
  EXPECT_EQ(hub_->subscriber_count(), 0u);
  // Told once: a producer's own end after that says nothing more.
  streams_[0]->sink.on_end(std::nullopt);
  EXPECT_EQ(active.seen(a).size(), 1u);
  auto refused = hub_->subscribe(active.subscriber, "updates", json::object{}, opener());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(streams_.size(), 2u);
}

TEST_F(HubTest, UnsharedProducersGiveEverySubscriberItsOwnSnapshot) {
  Recorder a, b;
  auto ia = subscribe(a, json::object{}, false);
  auto ib = subscribe(b, json::object{}, false);
  ASSERT_EQ(streams_.size(), 2u);
  hub_->activate(ia);
  hub_->activate(ib);
  streams_[1]->sink.on_data(json::value("b's"));
  EXPECT_TRUE(a.seen(ia).empty());
  EXPECT_EQ(b.seen(ib), (std::vector<std::string>{"data:\"b's\""}));
  EXPECT_TRUE(hub_->unsubscribe(b.subscriber->id(), ib));
  EXPECT_TRUE(streams_[1]->closed);
  EXPECT_FALSE(streams_[0]->closed);
}

TEST_F(HubTest, ADisconnectRemovesExactlyThatConnectionsSubscriptions) {
  Recorder a, b;
  std::vector<std::string> ids_a, ids_b;
  for (int i = 0; i < 3; ++i) ids_a.push_back(subscribe(a));
  for (int i = 0; i < 2; ++i) ids_b.push_back(subscribe(b));
  for (const auto& id : ids_a) hub_->activate(id);
  for (const auto& id : ids_b) hub_->activate(id);
  EXPECT_EQ(hub_->subscriber_count(), 5u);
  a.subscriber->close();  // runs the hub's hook: drop_subscriber
  EXPECT_EQ(hub_->subscriber_count(), 2u);
  EXPECT_FALSE(streams_[0]->closed);  // b still subscribes to the shared producer
  ASSERT_TRUE(hub_->publish("updates", json::value(7)));
  for (const auto& id : ids_b) EXPECT_EQ(b.seen(id), std::vector<std::string>{"data:7"});
  for (const auto& id : ids_a) EXPECT_TRUE(a.seen(id).empty());
  // b's count is its own: it may hold three more (of 5), not fewer, not more.
  for (int i = 0; i < 3; ++i) subscribe(b);
  EXPECT_FALSE(hub_->subscribe(b.subscriber, "updates", json::object{}, opener()).ok());
  b.subscriber->close();
  EXPECT_EQ(hub_->subscriber_count(), 0u);
  EXPECT_TRUE(streams_[0]->closed);  // the last subscriber left
}

TEST_F(HubTest, AConnectionHasACapOnProducersAndSubscriptions) {
  Recorder r, other;
  std::vector<std::string> ids;
  ids.reserve(3);
  for (int i = 0; i < 3; ++i) ids.push_back(subscribe(r, json::object{{"n", i}}));
  auto refused = hub_->subscribe(r.subscriber, "updates", json::object{{"n", 99}}, opener());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(streams_.size(), 3u);  // nothing started
  // Joining running producers is still allowed, up to the subscription cap.
  subscribe(r, json::object{{"n", 0}});
  subscribe(r, json::object{{"n", 1}});
  auto over = hub_->subscribe(r.subscriber, "updates", json::object{{"n", 2}}, opener());
  ASSERT_FALSE(over.ok());
  // Another connection has its own allowance.
  subscribe(other, json::object{{"n", 7}});
  // Room comes back when producers stop.
  EXPECT_TRUE(hub_->unsubscribe(r.subscriber->id(), ids[2]));
  EXPECT_TRUE(hub_->subscribe(r.subscriber, "updates", json::object{{"n", 8}}, opener()).ok());
  r.subscriber->close();
  EXPECT_EQ(hub_->subscriber_count(), 1u);
}

}  // namespace
}  // namespace hearth::host
