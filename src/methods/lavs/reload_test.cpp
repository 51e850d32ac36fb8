// Services added, edited and removed while serving (Host::reload), seen through the lavs/*
// methods: calls in flight, subscriptions, lavs/services.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "host/host.hpp"
#include "methods/lavs/lavs.hpp"
#include "methods/lavs/testing.hpp"
#include "proc/process.hpp"

namespace hearth::methods::lavs {
namespace {
namespace fs = std::filesystem;

/// A service "name" whose `version` query answers {"v": version} after `delay` seconds, with a
/// subscription `updates` and, when `with_gone`, a second one `gone`.
std::string manifest(const std::string& name, int version, bool with_gone = true,
                     const std::string& delay = "0") {
  std::string out = R"({"lavs":"1.0","name":")" + name + R"(","version":"1.0.0","endpoints":[
    {"id":"version","method":"query","handler":{"type":"script","command":"sh",
      "args":["-c","sleep )" +
                    delay + R"(; echo '{\"v\":)" + std::to_string(version) + R"(}'"]}},
    {"id":"updates","method":"subscription",
     "handler":{"type":"script","command":"sh","args":["-c","echo '{\"up\":1}'; exec sleep 60"]}})";
  if (with_gone) {
    out += R"(,
    {"id":"gone","method":"subscription",
     "handler":{"type":"script","command":"sh","args":["-c","echo '{\"g\":1}'; exec sleep 60"]}})";
  }
  return out + "]}";
}

class ReloadTest : public LavsTest {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);
    root_ = fs::temp_directory_path() / ("hearth-reload-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    write("a", manifest("a", 1, true, "0.5"));
    write("b", manifest("b", 1));
    ASSERT_NO_FATAL_FAILURE(serve({root_}));
  }
  void TearDown() override {
    LavsTest::TearDown();
    fs::remove_all(root_);
  }

  void write(const std::string& folder, const std::string& text) const {
    fs::create_directories(root_ / folder);
    // Written beside and renamed over, as editors do: a reload never reads half a file.
    std::ofstream(root_ / folder / "lavs.json.tmp") << text;
    fs::rename(root_ / folder / "lavs.json.tmp", root_ / folder / "lavs.json");
  }

  host::ReloadReport reload() { return host_->reload({root_}); }

  std::vector<std::string> names() {
    std::vector<std::string> out;
    auto r = rpc("lavs/services", json::object{});
    for (const auto& s : r.at("result").at("services").as_array()) {
      out.emplace_back(s.at("name").as_string());
    }
    return out;
  }

  json::value version(const std::string& service) {
    return rpc("lavs/call", json::object{{"service", service}, {"endpoint", "version"}});
  }

  fs::path root_;
};

TEST_F(ReloadTest, NothingChangedChangesNothing) {
  const auto before = host_->services();
  auto report = reload();
  EXPECT_FALSE(report.any_change());
  EXPECT_TRUE(report.problems.failures.empty());
  EXPECT_EQ(host_->services(), before);  // the same snapshot, not a copy
}

TEST_F(ReloadTest, ACallInFlightFinishesOnTheOldDefinition) {
  auto in_flight = start("lavs/call", json::object{{"service", "a"}, {"endpoint", "version"}});
  ASSERT_TRUE(run_until([] { return proc::running_count() > 0; }));  // the old handler runs
  write("a", manifest("a", 2));
  auto report = reload();
  EXPECT_EQ(report.changed, std::vector<std::string>{"a"});
  EXPECT_TRUE(report.added.empty());
  EXPECT_TRUE(report.removed.empty());
  ASSERT_TRUE(run_until([&] { return in_flight->has_value(); }));
  EXPECT_EQ((*in_flight)->at("result").at("v"), 1) << json::dump(**in_flight);
  EXPECT_EQ(version("a").at("result").at("v"), 2);
  EXPECT_EQ(version("b").at("result").at("v"), 1);
}

TEST_F(ReloadTest, SubscribersOfAChangedServiceAreToldWhy) {
  auto pushes = std::make_shared<testing::Pushes>();
  auto session = testing::push_session(pushes);
  auto up = rpc("lavs/subscribe", json::object{{"service", "a"}, {"endpoint", "updates"}}, session);
  auto gone = rpc("lavs/subscribe", json::object{{"service", "a"}, {"endpoint", "gone"}}, session);
  auto other =
      rpc("lavs/subscribe", json::object{{"service", "b"}, {"endpoint", "updates"}}, session);
  ASSERT_TRUE(up.as_object().contains("result")) << json::dump(up);
  ASSERT_TRUE(gone.as_object().contains("result")) << json::dump(gone);
  ASSERT_TRUE(other.as_object().contains("result")) << json::dump(other);
  ASSERT_TRUE(run_until([&] { return pushes->with_method("lavs/data").size() == 3; }));

  write("a", manifest("a", 2, /*with_gone=*/false));  // `gone` is removed, `updates` stays
  ASSERT_EQ(reload().changed, std::vector<std::string>{"a"});
  ASSERT_TRUE(run_until([&] { return pushes->with_method("lavs/subscriptionEnded").size() == 2; }));
  std::map<std::string, std::string> reasons;
  for (const auto& m : pushes->with_method("lavs/subscriptionEnded")) {
    reasons[std::string(m.at("params").at("subscriptionId").as_string())] =
        std::string(m.at("params").at("reason").as_string());
  }
  EXPECT_EQ(reasons[std::string(up.at("result").at("subscriptionId").as_string())], "reloaded");
  EXPECT_EQ(reasons[std::string(gone.at("result").at("subscriptionId").as_string())], "removed");
  // b's subscription lives on; a's producers stopped.
  EXPECT_EQ(reasons.count(std::string(other.at("result").at("subscriptionId").as_string())), 0u);
  EXPECT_TRUE(run_until([] { return proc::running_count() == 1; }));

  // Subscribing again reaches the new definition; the old subscription ids are gone.
  auto again =
      rpc("lavs/subscribe", json::object{{"service", "a"}, {"endpoint", "updates"}}, session);
  EXPECT_TRUE(again.as_object().contains("result")) << json::dump(again);
  EXPECT_EQ(
      code(rpc("lavs/unsubscribe",
               json::object{{"subscriptionId", up.at("result").at("subscriptionId")}}, session)),
      -32602);
  EXPECT_EQ(
      code(rpc("lavs/subscribe", json::object{{"service", "a"}, {"endpoint", "gone"}}, session)),
      -32601);
}

TEST_F(ReloadTest, ServicesComeAndGoWithTheirFolders) {
  auto pushes = std::make_shared<testing::Pushes>();
  auto session = testing::push_session(pushes);
  auto sub =
      rpc("lavs/subscribe", json::object{{"service", "b"}, {"endpoint", "updates"}}, session);
  ASSERT_TRUE(sub.as_object().contains("result"));
  fs::remove_all(root_ / "b");
  write("c", manifest("c", 3));
  auto report = reload();
  EXPECT_EQ(report.added, std::vector<std::string>{"c"});
  EXPECT_EQ(report.removed, std::vector<std::string>{"b"});
  EXPECT_TRUE(report.changed.empty());
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(version("c").at("result").at("v"), 3);
  EXPECT_EQ(code(version("b")), -32602);
  ASSERT_TRUE(run_until([&] { return pushes->with_method("lavs/subscriptionEnded").size() == 1; }));
  EXPECT_EQ(pushes->with_method("lavs/subscriptionEnded")[0].at("params").at("reason"), "removed");
}

TEST_F(ReloadTest, ABadEditKeepsTheOldDefinitionAndIsReportedOnce) {
  const auto before = host_->find_service("a").value();
  write("a",
        R"({"lavs":"1.0","name":"a","version":"1.0.0","endpoints":[{"id":"x","method":"poll"}]})");
  auto report = reload();
  EXPECT_FALSE(report.any_change());
  ASSERT_EQ(report.problems.failures.size(), 1u);
  EXPECT_EQ(report.problems.failures[0].file, root_ / "a" / "lavs.json");
  EXPECT_EQ(host_->find_service("a").value(), before);
  EXPECT_EQ(version("a").at("result").at("v"), 1);
  // The same broken text is not reported again; an edit that fixes it is loaded.
  EXPECT_TRUE(reload().problems.failures.empty());
  write("a", manifest("a", 2));
  report = reload();
  EXPECT_EQ(report.changed, std::vector<std::string>{"a"});
  EXPECT_TRUE(report.problems.failures.empty());
  EXPECT_EQ(version("a").at("result").at("v"), 2);
  // Broken again, then back to exactly the text being served: nothing to load, nothing to say.
  write("a", "{ not json");
  EXPECT_EQ(reload().problems.failures.size(), 1u);
  write("a", manifest("a", 2));
  report = reload();
  EXPECT_FALSE(report.any_change());
  EXPECT_TRUE(report.problems.failures.empty());
}

TEST_F(ReloadTest, ANameServedByAnotherFolderIsRefused) {
  write("b", manifest("a", 9));
  auto report = reload();
  EXPECT_FALSE(report.any_change());
  ASSERT_EQ(report.problems.failures.size(), 1u);
  EXPECT_EQ(report.problems.failures[0].problems[0].path, "name");
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(version("a").at("result").at("v"), 1);
  // A service renamed in its own folder: the old name is removed, the new one added.
  write("b", manifest("bee", 2));
  report = reload();
  EXPECT_EQ(report.added, std::vector<std::string>{"bee"});
  EXPECT_EQ(report.removed, std::vector<std::string>{"b"});
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "bee"}));
}

}  // namespace
}  // namespace hearth::methods::lavs
