#include "methods/lavs/lavs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <csignal>
#include <fstream>
#include <mutex>
#include <thread>

#include "host/testing.hpp"
#include "methods/lavs/testing.hpp"
#include "proc/process.hpp"

namespace hearth::methods::lavs {
namespace {
namespace asio = boost::asio;
namespace fs = std::filesystem;

using host::testing::TempService;

const char* kManifest = R"({
  "lavs": "1.0", "name": "svc", "version": "1.0.0",
  "endpoints": [
    {"id": "echo", "method": "query",
     "handler": {"type": "script", "command": "cat"},
     "schema": {"input": {"type": "object",
                          "properties": {"text": {"type": "string"}, "n": {"type": "integer", "default": 7}},
                          "required": ["text"]}}},
    {"id": "bad", "method": "query",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "echo '{\"id\": \"x\"}'"]},
     "schema": {"output": {"$ref": "#/types/Item"}}},
    {"id": "slow", "method": "query", "permissions": {"maxExecutionTime": 200},
     "handler": {"type": "script", "command": "sleep", "args": ["30"]}},
    {"id": "notify", "method": "mutation",
     "handler": {"type": "script", "command": "sh",
                 "args": ["-c", "echo '{\"subscription\":\"updates\",\"data\":{\"n\":1}}' >&3; echo '{}'"]}},
    {"id": "updates", "method": "subscription",
     "handler": {"type": "script", "command": "sh", "args": ["-c", "echo '{\"hello\":true}'; exec sleep 60"]}}
  ],
  "types": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
  "permissions": {"fileAccess": ["./data/**", "!./data/secret.txt"]}
})";

class LavsMethodsTest : public LavsTest {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);
    service_ = std::make_unique<TempService>(kManifest);
    service_->write("data/hello.txt", "hi there\n");
    service_->write("data/secret.txt", "no\n");
    service_->write("outside.txt", "outside\n");
    ASSERT_NO_FATAL_FAILURE(serve({service_->dir()}));
  }

  std::unique_ptr<TempService> service_;
};

TEST_F(LavsMethodsTest, CallAppliesDefaultsAndReturnsHandlerOutput) {
  auto r = rpc("lavs/call", json::object{{"endpoint", "echo"}, {"input", {{"text", "hi"}}}});
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  EXPECT_EQ(r.at("result").at("text"), "hi");
  EXPECT_EQ(r.at("result").at("n"), 7);
}

TEST_F(LavsMethodsTest, InvalidInputNamesFieldAndConstraint) {
  auto r = rpc("lavs/call", json::object{{"endpoint", "echo"}, {"input", json::object{}}});
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(r.at("error").at("data").at("field"), "text");
  EXPECT_EQ(r.at("error").at("data").at("constraint"), "required");
  r = rpc("lavs/call", json::object{{"endpoint", "echo"}, {"input", {{"text", 5}}}});
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(r.at("error").at("data").at("field"), "text");
  EXPECT_EQ(r.at("error").at("data").at("constraint"), "type");
}

TEST_F(LavsMethodsTest, MissingEndpointParamAndUnknownEndpoint) {
  auto r = rpc("lavs/call", json::object{});
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(r.at("error").at("data").at("field"), "endpoint");
  r = rpc("lavs/call", json::object{{"endpoint", "nope"}});
  EXPECT_EQ(code(r), -32601);
  EXPECT_EQ(r.at("error").at("data").at("endpoint"), "nope");
  r = rpc("lavs/call", json::array{1});
  EXPECT_EQ(code(r), -32602);
}

TEST_F(LavsMethodsTest, UnknownServiceIsInvalidParams) {
  auto r = rpc("lavs/call", json::object{{"service", "other"}, {"endpoint", "echo"}});
  EXPECT_EQ(code(r), -32602);
  EXPECT_EQ(r.at("error").at("data").at("field"), "service");
}

TEST_F(LavsMethodsTest, SubscriptionEndpointIsNotCallable) {
  auto r = rpc("lavs/call", json::object{{"endpoint", "updates"}});
  EXPECT_EQ(code(r), -32602);
}

TEST_F(LavsMethodsTest, OutputNotMatchingSchemaIsInternalError) {
  auto r = rpc("lavs/call", json::object{{"endpoint", "bad"}});
  EXPECT_EQ(code(r), -32603);
  EXPECT_EQ(r.at("error").at("message"), "Invalid output from handler");
}

TEST_F(LavsMethodsTest, MaxExecutionTimeGivesTimeout) {
  auto r = rpc("lavs/call", json::object{{"endpoint", "slow"}});
  EXPECT_EQ(code(r), -32002);
}

TEST_F(LavsMethodsTest, ManifestAndServices) {
  auto r = rpc("lavs/manifest", json::object{});
  EXPECT_EQ(r.at("result").at("name"), "svc");
  r = rpc("lavs/services", json::object{});
  auto& list = r.at("result").at("services").as_array();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("name"), "svc");
  EXPECT_EQ(list[0].at("endpoints").as_array().size(), 5u);
}

TEST_F(LavsMethodsTest, ReadFileFollowsFileAccess) {
  auto r = rpc("lavs/readFile", json::object{{"path", "data/hello.txt"}});
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  EXPECT_EQ(r.at("result").at("content"), "hi there\n");
  EXPECT_EQ(r.at("result").at("encoding"), "utf-8");

  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "data/secret.txt"}})), -32001);
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "outside.txt"}})), -32001);
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "data/../outside.txt"}})), -32001);
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "../../etc/passwd"}})), -32001);
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "/etc/passwd"}})), -32001);
  // A link inside the allowed folder that leads out of it is refused.
  fs::create_symlink("/etc/passwd", service_->dir() / "data" / "link.txt");
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "data/link.txt"}})), -32001);
  fs::create_symlink(service_->dir() / "data" / "secret.txt",
                     service_->dir() / "data" / "link2.txt");
  EXPECT_EQ(code(rpc("lavs/readFile", json::object{{"path", "data/link2.txt"}})), -32001);
  // Binary content comes back as base64.
  service_->write("data/bin.dat", std::string("\xff\x00\x01", 3));
  r = rpc("lavs/readFile", json::object{{"path", "data/bin.dat"}});
  EXPECT_EQ(r.at("result").at("encoding"), "base64");
  EXPECT_EQ(r.at("result").at("content"), "/wAB");
}

// A handler that can write in data/ swaps a folder for a link to elsewhere while clients read:
// no read may ever return what lies behind the link (the file is opened relative to the service
// folder without following links, not checked by path and then opened).
TEST_F(LavsMethodsTest, ReadFileCannotBeRacedIntoFollowingASwappedLink) {
  const fs::path outside = service_->dir() / "elsewhere";
  fs::create_directories(outside);
  service_->write("elsewhere/x.txt", "SECRET\n");
  service_->write("data/sub/x.txt", "ok\n");
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const fs::path sub = service_->dir() / "data" / "sub";
    const fs::path real = service_->dir() / "data" / "sub.real";
    std::error_code ec;
    while (!stop) {
      fs::rename(sub, real, ec);
      fs::create_directory_symlink(outside, sub, ec);
      fs::remove(sub, ec);
      fs::rename(real, sub, ec);
    }
  });
  int ok = 0, leaked = 0;
  for (int i = 0; i < 20000; ++i) {
    auto r = rpc("lavs/readFile", json::object{{"path", "data/sub/x.txt"}});
    if (!r.as_object().contains("result")) continue;
    if (r.at("result").at("content") == "SECRET\n") ++leaked;
    if (r.at("result").at("content") == "ok\n") ++ok;
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(leaked, 0);
  EXPECT_GT(ok, 0);
  // A link inside the allowed folder is refused as such, even one that stays inside it.
  fs::create_symlink("hello.txt", service_->dir() / "data" / "alias.txt");
  auto r = rpc("lavs/readFile", json::object{{"path", "data/alias.txt"}});
  EXPECT_EQ(code(r), -32001);
  EXPECT_NE(json::dump(r).find("symbolic link"), std::string::npos) << json::dump(r);
}

TEST_F(LavsMethodsTest, SubscribeNeedsAPushCapableSession) {
  auto r = rpc("lavs/subscribe", json::object{{"endpoint", "updates"}});
  EXPECT_EQ(code(r), -32601);
}

TEST_F(LavsMethodsTest, SubscriptionReceivesProducerAndMutationData) {
  auto pushes = std::make_shared<testing::Pushes>();
  auto session = testing::push_session(pushes);
  auto r = rpc("lavs/subscribe", json::object{{"endpoint", "updates"}}, session);
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  std::string id(r.at("result").at("subscriptionId").as_string());
  ASSERT_TRUE(run_until([&] { return pushes->size() >= 1; }));
  auto first = pushes->at(0);
  EXPECT_EQ(first.at("method"), "lavs/data");
  EXPECT_EQ(first.at("params").at("subscriptionId").as_string(), id);
  EXPECT_EQ(first.at("params").at("data").at("hello"), true);

  // A mutation on another connection publishes to the subscription.
  r = rpc("lavs/call", json::object{{"endpoint", "notify"}});
  ASSERT_TRUE(r.as_object().contains("result")) << json::dump(r);
  ASSERT_TRUE(run_until([&] { return pushes->size() >= 2; }));
  EXPECT_EQ(pushes->at(1).at("params").at("data").at("n"), 1);

  EXPECT_EQ((*host_->services())[0]->hub->producer_count(), 1u);
  // Unsubscribing from another session is refused; from the owner it stops the producer.
  auto other = std::make_shared<rpc::Session>("ws", [](const std::string&) {});
  EXPECT_EQ(code(rpc("lavs/unsubscribe", json::object{{"subscriptionId", id}}, other)), -32602);
  r = rpc("lavs/unsubscribe", json::object{{"subscriptionId", id}}, session);
  EXPECT_EQ(r.at("result").at("unsubscribed"), true);
  EXPECT_EQ((*host_->services())[0]->hub->producer_count(), 0u);
  EXPECT_TRUE(run_until([] { return proc::running_count() == 0; }));
}

TEST_F(LavsMethodsTest, SubscribersShareOneProducerAndDisconnectStopsIt) {
  auto a = std::make_shared<rpc::Session>("ws", [](const std::string&) {});
  auto b = std::make_shared<rpc::Session>("ws", [](const std::string&) {});
  auto ra = rpc("lavs/subscribe", json::object{{"endpoint", "updates"}}, a);
  auto rb = rpc("lavs/subscribe", json::object{{"endpoint", "updates"}}, b);
  ASSERT_TRUE(ra.as_object().contains("result"));
  ASSERT_TRUE(rb.as_object().contains("result"));
  auto& hub = *(*host_->services())[0]->hub;
  EXPECT_EQ(hub.producer_count(), 1u);
  EXPECT_EQ(hub.subscriber_count(), 2u);
  a->close();
  EXPECT_EQ(hub.producer_count(), 1u);
  b->close();
  EXPECT_EQ(hub.producer_count(), 0u);
  EXPECT_EQ(hub.subscriber_count(), 0u);
  EXPECT_TRUE(run_until([] { return proc::running_count() == 0; }));
}

}  // namespace
}  // namespace hearth::methods::lavs
