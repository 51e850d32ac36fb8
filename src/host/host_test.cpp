#include "host/host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <set>
#include <string>
#include <utility>

#include "host/testing.hpp"

namespace hearth::host {
namespace {
namespace asio = boost::asio;
using testing::TempService;

TEST(HostLoad, ReportsEveryProblemAndServesNothing) {
  TempService broken(R"({"lavs": "2.0", "name": "x", "version": "1.0.0",
    "endpoints": [{"id": "a", "method": "query", "handler": {"type": "script", "command": "cat", "timeout": -1}},
                  {"id": "b", "method": "poll", "handler": {"type": "nope"}}]})");
  asio::io_context ioc;
  LoadReport report;
  auto host = Host::load({broken.dir()}, {}, ioc.get_executor(), report);
  EXPECT_FALSE(host);
  ASSERT_EQ(report.failures.size(), 1u);
  std::set<std::string> paths;
  for (const auto& p : report.failures[0].problems) paths.insert(p.path);
  EXPECT_TRUE(paths.count("lavs"));
  EXPECT_TRUE(paths.count("endpoints[0].handler.timeout"));
  EXPECT_TRUE(paths.count("endpoints[1].method"));
  EXPECT_TRUE(paths.count("endpoints[1].handler.type"));
}

TEST(HostLoad, DuplicateServiceNamesAreRefused) {
  TempService a(
      R"({"lavs":"1.0","name":"same","version":"1.0.0","endpoints":[{"id":"e","method":"query","handler":{"type":"script","command":"cat"}}]})");
  TempService b(
      R"({"lavs":"1.0","name":"same","version":"1.0.0","endpoints":[{"id":"e","method":"query","handler":{"type":"script","command":"cat"}}]})");
  asio::io_context ioc;
  LoadReport report;
  EXPECT_FALSE(Host::load({a.dir(), b.dir()}, {}, ioc.get_executor(), report));
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].problems[0].path, "name");
}

// Every kind the spec defines runs (registry_test covers kinds marked unsupported); a type no
// kind has is refused at load, naming it.
TEST(HostLoad, UnknownKindIsRefusedAtLoad) {
  TempService s(
      R"({"lavs":"1.0","name":"f","version":"1.0.0","endpoints":[{"id":"e","method":"query","handler":{"type":"made-up"}}]})");
  asio::io_context ioc;
  LoadReport report;
  EXPECT_FALSE(Host::load({s.dir()}, {}, ioc.get_executor(), report));
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].problems[0].path, "endpoints[0].handler.type");
  EXPECT_NE(report.failures[0].problems[0].message.find("unknown handler type 'made-up'"),
            std::string::npos);
}

TEST(HostLoad, HttpHandlerOnASubscriptionIsRefusedAtLoad) {
  TempService s(
      R"({"lavs":"1.0","name":"f","version":"1.0.0","endpoints":[{"id":"e","method":"subscription","handler":{"type":"http","url":"https://example.com/","method":"GET"}}]})");
  asio::io_context ioc;
  LoadReport report;
  EXPECT_FALSE(Host::load({s.dir()}, {}, ioc.get_executor(), report));
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].problems[0].to_string(),
            "endpoints[0].handler: http handlers cannot serve subscriptions");
}

/// A record of a call of endpoint "echo" of service "svc".
AuditRecord echo_call(std::string method, std::string transport) {
  AuditRecord r;
  r.service = "svc";
  r.endpoint = "echo";
  r.method = std::move(method);
  r.transport = std::move(transport);
  return r;
}

TEST(AuditLogTest, FormatsOneJsonLine) {
  AuditRecord r = echo_call("view/call", "ws");
  r.duration = std::chrono::microseconds(1500);
  r.error = ErrorCode::kTimeout;
  r.client = "hearth-cli";
  r.mount = "m42";
  auto line = AuditLog::format(
      r, std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123)));
  ASSERT_EQ(line.back(), '\n');
  auto v = json::parse(line);
  EXPECT_EQ(v.at("time"), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(v.at("service"), "svc");
  EXPECT_EQ(v.at("transport"), "ws");
  EXPECT_EQ(v.at("durationMs"), 1.5);
  EXPECT_EQ(v.at("outcome"), "error");
  EXPECT_EQ(v.at("code"), -32002);
  EXPECT_EQ(v.at("client"), "hearth-cli");
  EXPECT_EQ(v.at("mount"), "m42");
  // Left out when empty.
  const AuditRecord bare = echo_call("lavs/call", "http");
  auto plain = json::parse(AuditLog::format(bare, std::chrono::system_clock::now()));
  EXPECT_FALSE(plain.as_object().contains("client"));
  EXPECT_FALSE(plain.as_object().contains("mount"));
}

TEST(AuditLogTest, ALineIsOneJsonObjectWhateverTheClientCallsItself) {
  // X-Hearth-Client is the client's own words: quotes, a line break or a control character in
  // it must neither end the line nor forge a member.
  AuditRecord r = echo_call("lavs/call", "http");
  r.duration = std::chrono::microseconds(250);
  r.client = "x\",\"outcome\":\"ok\"}\n{\"forged\":\u0001\\";
  r.outcome = "needs_input";
  r.detail = json::object{{"domain", "api.example.com"}, {"status", 401}};
  const auto line = AuditLog::format(
      r, std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123)));
  EXPECT_EQ(line,
            "{\"time\":\"2023-11-14T22:13:20.123Z\",\"service\":\"svc\",\"endpoint\":\"echo\","
            "\"method\":\"lavs/call\",\"transport\":\"http\","
            "\"client\":\"x\\\",\\\"outcome\\\":\\\"ok\\\"}\\n{\\\"forged\\\":\\u0001\\\\\","
            "\"durationMs\":0.25,\"outcome\":\"needs_input\","
            "\"detail\":{\"domain\":\"api.example.com\",\"status\":401}}\n");
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  const auto v = json::parse(line);
  EXPECT_EQ(v.at("client").as_string(), r.client);
  EXPECT_EQ(v.at("outcome"), "needs_input");
}

}  // namespace
}  // namespace hearth::host
