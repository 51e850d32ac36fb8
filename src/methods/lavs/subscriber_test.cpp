// A JSON-RPC connection as the host's subscriber: the LAVS notifications it is pushed.
#include "methods/lavs/subscriber.hpp"

#include <gtest/gtest.h>

#include "methods/testing.hpp"

namespace hearth::methods::lavs {
namespace {
using methods::testing::push_session;
using methods::testing::Pushes;

TEST(SessionSubscriber, ItemsAndEndsAreLavsNotificationsOfTheSession) {
  auto pushes = std::make_shared<Pushes>();
  auto session = push_session(pushes);
  auto subscriber = session_subscriber(session);
  EXPECT_EQ(subscriber->id(), session->id());

  const json::value data = json::object{{"n", 1}, {"s", "é\""}};
  subscriber->item("sub-1", host::SubscriptionItem{data, json::dump(data)});
  subscriber->ended("sub-1", "completed", std::nullopt);
  subscriber->ended("sub-2", "error", Error::make(ErrorCode::kHandlerError, "it failed"));
  ASSERT_EQ(pushes->size(), 3u);
  EXPECT_EQ(pushes->at(0), json::parse(R"({"jsonrpc":"2.0","method":"lavs/data",
      "params":{"subscriptionId":"sub-1","data":{"n":1,"s":"é\""}}})"));
  EXPECT_EQ(pushes->at(1), json::parse(R"({"jsonrpc":"2.0","method":"lavs/subscriptionEnded",
      "params":{"subscriptionId":"sub-1","reason":"completed"}})"));
  EXPECT_EQ(pushes->at(2), json::parse(R"({"jsonrpc":"2.0","method":"lavs/subscriptionEnded",
      "params":{"subscriptionId":"sub-2","reason":"error",
                "error":{"code":-32003,"message":"it failed"}}})"));
}

TEST(SessionSubscriber, ItsEndIsTheSessions) {
  auto pushes = std::make_shared<Pushes>();
  auto session = push_session(pushes);
  auto subscriber = session_subscriber(session);
  int closed = 0;
  subscriber->on_close([&closed] { ++closed; });
  EXPECT_EQ(closed, 0);
  session->close();
  EXPECT_EQ(closed, 1);
  subscriber->on_close([&closed] { ++closed; });  // closed already: at once
  EXPECT_EQ(closed, 2);
  // A session that is gone: nothing is pushed, and a hook runs at once.
  session.reset();
  subscriber->item("sub-1", host::SubscriptionItem{json::value(1), "1"});
  EXPECT_EQ(pushes->size(), 0u);
  subscriber->on_close([&closed] { ++closed; });
  EXPECT_EQ(closed, 3);
}

}  // namespace
}  // namespace hearth::methods::lavs
