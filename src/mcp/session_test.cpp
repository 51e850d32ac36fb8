#include "mcp/session.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <mutex>

#include "proc/testing.hpp"

namespace hearth::mcp {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

json::value parse(std::string_view text) {
  auto v = json::parse_text(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? std::move(v).value() : json::value();
}

/// An MCP server in the test: answers what the session sends, from another thread, the way a
/// transport delivers a real server's messages.
class FakeServer final : public Transport {
 public:
  struct Log {
    std::mutex mutex;
    std::vector<json::object> received;
    std::vector<json::object> all() {
      std::lock_guard lock(mutex);
      return received;
    }
    std::size_t count(std::string_view method) {
      std::lock_guard lock(mutex);
      std::size_t n = 0;
      for (const auto& m : received) {
        if (const auto* x = m.if_contains("method");
            x && x->is_string() && x->get_string() == method)
          ++n;
      }
      return n;
    }
  };

  FakeServer(asio::any_io_executor executor, std::shared_ptr<Log> log)
      : executor_(std::move(executor)), log_(std::move(log)) {}

  std::string version = "2025-06-18";
  std::vector<std::vector<std::string>> pages = {{"echo", "fail", "slow", "progress"}};
  bool ask_ping = false;

  Status open(Handlers handlers) override {
    handlers_ = std::move(handlers);
    return {};
  }
  void close() override { closed_ = true; }

  void send(json::value message) override {
    auto& m = message.as_object();
    {
      std::lock_guard lock(log_->mutex);
      log_->received.push_back(m);
    }
    const auto* method = m.if_contains("method");
    const auto* id = m.if_contains("id");
    if (method == nullptr || id == nullptr) return;  // a notification or a response
    const std::string name(method->as_string());
    const json::value params = m.contains("params") ? m.at("params") : json::value();
    if (name == "initialize") {
      if (ask_ping) later(parse(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})"), 0ms);
      json::object result;
      result["protocolVersion"] = version;
      result["capabilities"] = parse(R"({"tools":{"listChanged":true}})");
      result["serverInfo"] = parse(R"({"name":"fake","version":"1"})");
      reply(*id, std::move(result));
    } else if (name == "tools/list") {
      std::size_t page = 0;
      if (const auto* c = json::member(params, "cursor"))
        page = std::stoul(std::string(c->as_string()));
      json::array tools;
      for (const auto& t : pages.at(page)) {
        json::object tool;
        tool["name"] = t;
        tool["inputSchema"] = parse(R"({"type":"object"})");
        tools.push_back(std::move(tool));
      }
      json::object result;
      result["tools"] = std::move(tools);
      if (page + 1 < pages.size()) result["nextCursor"] = std::to_string(page + 1);
      reply(*id, std::move(result));
    } else if (name == "tools/call") {
      const std::string tool(params.at("name").as_string());
      const auto token = params.at("_meta").at("progressToken");
      if (tool == "echo") {
        json::object result;
        result["content"] = parse(R"([{"type":"text","text":"hi"}])");
        result["structuredContent"] = params.at("arguments");
        reply(*id, std::move(result));
      } else if (tool == "fail") {
        reply(*id, parse(R"({"isError":true,"content":[{"type":"text","text":"disk full"}]})")
                       .as_object());
      } else if (tool == "progress") {
        // Five progress notifications 100 ms apart, then the answer: 530 ms in all.
        for (int i = 1; i <= 5; ++i) {
          json::object p;
          p["progressToken"] = token;
          p["progress"] = i;
          json::object n;
          n["jsonrpc"] = "2.0";
          n["method"] = "notifications/progress";
          n["params"] = std::move(p);
          later(std::move(n), std::chrono::milliseconds(100 * i));
        }
        json::object response;
        response["jsonrpc"] = "2.0";
        response["id"] = *id;
        response["result"] = parse(R"({"content":[]})");
        later(std::move(response), 530ms);
      }
      // "slow": never answers.
    } else {
      json::object response;
      response["jsonrpc"] = "2.0";
      response["id"] = *id;
      response["error"] = parse(R"({"code":-32601,"message":"no such method"})");
      later(std::move(response), 0ms);
    }
  }

  /// Sends a message from the server.
  void push(json::value message) { later(std::move(message), 0ms); }
  void crash() {
    asio::post(executor_, [h = handlers_] {
      h.on_closed(Error::make(ErrorCode::kHandlerError, "MCP server 'fake' exited with code 3"));
    });
  }

 private:
  void reply(const json::value& id, json::object result) {
    json::object response;
    response["jsonrpc"] = "2.0";
    response["id"] = id;
    response["result"] = std::move(result);
    later(std::move(response), 0ms);
  }
  void later(json::value message, std::chrono::milliseconds delay) {
    auto timer = std::make_shared<asio::steady_timer>(executor_, delay);
    timer->async_wait([timer, h = handlers_, m = std::move(message)](auto) mutable {
      h.on_message(std::move(m));
    });
  }

  asio::any_io_executor executor_;
  std::shared_ptr<Log> log_;
  Handlers handlers_;
  bool closed_ = false;
};

class SessionTest : public ::testing::Test {
 protected:
  template <class T>
  T run(asio::awaitable<T> work) {
    return start(std::move(work)).get();
  }
  /// Starts `work` on the test's I/O thread; the future gives its value.
  template <class T>
  std::future<T> start(asio::awaitable<T> work) {
    auto promise = std::make_shared<std::promise<T>>();
    auto future = promise->get_future();
    asio::co_spawn(
        io_.executor(),
        [promise, w = std::move(work)]() mutable -> asio::awaitable<void> {
          promise->set_value(co_await std::move(w));
        },
        asio::detached);
    return future;
  }
  std::shared_ptr<Session> make(const std::function<void(FakeServer&)>& tune = {}) {
    auto server = std::make_unique<FakeServer>(io_.executor(), log_);
    server_ = server.get();
    if (tune) tune(*server);
    return Session::create(io_.executor(), std::move(server), "fake");
  }

  proc::testing::IoThread io_;
  std::shared_ptr<FakeServer::Log> log_ = std::make_shared<FakeServer::Log>();
  FakeServer* server_ = nullptr;
};

TEST_F(SessionTest, InitializeAsksForTheNewestVersionAndAcceptsAnOlderOneItSpeaks) {
  auto session = make();
  auto started = run(session->start(2s));
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_EQ(session->protocol_version(), "2025-06-18");
  EXPECT_EQ(session->server_info().at("name").as_string(), "fake");
  auto sent = log_->all();
  ASSERT_GE(sent.size(), 2u);
  EXPECT_EQ(sent[0].at("method").as_string(), "initialize");
  EXPECT_EQ(sent[0].at("params").at("protocolVersion").as_string(), kSupportedVersions[0]);
  EXPECT_EQ(sent[0].at("params").at("clientInfo").at("name").as_string(), "hearth");
  EXPECT_EQ(sent[1].at("method").as_string(), "notifications/initialized");
  EXPECT_TRUE(session->alive());
}

TEST_F(SessionTest, AnOlderProtocolVersionIsRefused) {
  auto session = make([](FakeServer& s) { s.version = "2024-11-05"; });
  auto started = run(session->start(2s));
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("speaks MCP 2024-11-05"), std::string::npos)
      << started.error().message;
  EXPECT_FALSE(session->alive());
  EXPECT_EQ(log_->count("notifications/initialized"), 0u);
}

TEST_F(SessionTest, ToolsAreListedOverEveryPageAndCachedUntilListChanged) {
  auto session = make([](FakeServer& s) { s.pages = {{"a", "b"}, {"c"}}; });
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto tools = run(session->tools(2s));
  ASSERT_TRUE(tools.ok());
  ASSERT_EQ(tools->size(), 3u);
  EXPECT_EQ((*tools)[2].name, "c");
  EXPECT_EQ((*tools)[0].input_schema.at("type").as_string(), "object");
  EXPECT_EQ(session->tools_list_requests(), 2u);
  ASSERT_TRUE(run(session->tools(2s)).ok());
  EXPECT_EQ(session->tools_list_requests(), 2u);  // cached

  server_->push(parse(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})"));
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(run(session->tools(2s)).ok());
  EXPECT_EQ(session->tools_list_requests(), 4u);  // both pages again
}

TEST_F(SessionTest, CallToolSendsArgumentsWithAProgressToken) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto result = run(session->call_tool("echo", parse(R"({"x":1})"), Limits{2s, {}}));
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto mapped = tool_result("fake", "echo", result.value());
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(json::serialize(mapped.value()), R"({"x":1})");
  for (const auto& m : log_->all()) {
    if (m.at("method").as_string() != "tools/call") continue;
    EXPECT_EQ(m.at("params").at("arguments").at("x").as_int64(), 1);
    EXPECT_TRUE(m.at("params").at("_meta").at("progressToken").is_string());
  }
}

TEST_F(SessionTest, IsErrorBecomesAHandlerErrorWithTheText) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto result = run(session->call_tool("fail", json::object(), Limits{2s, {}}));
  ASSERT_TRUE(result.ok());
  auto mapped = tool_result("fake", "fail", result.value());
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(mapped.error().message.find("disk full"), std::string::npos);
  EXPECT_EQ(mapped.error().data.at("tool").as_string(), "fail");
}

TEST_F(SessionTest, ContentBlocksAreTheResultWithoutStructuredContent) {
  auto mapped =
      tool_result("s", "t", parse(R"({"content":[{"type":"text","text":"a"}]})").as_object());
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(json::serialize(mapped.value()), R"([{"type":"text","text":"a"}])");
}

TEST_F(SessionTest, AnUnknownToolIsRefusedNamingTheToolsThereAre) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto result = run(session->call_tool("nope", json::object(), Limits{2s, {}}));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("has no tool 'nope'"), std::string::npos);
  EXPECT_NE(result.error().message.find("echo, fail"), std::string::npos);
  EXPECT_EQ(log_->count("tools/call"), 0u);
  EXPECT_EQ(session->tools_list_requests(), 2u);  // listed once more before refusing
}

TEST_F(SessionTest, ATimeoutCancelsTheRequest) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto result = run(session->call_tool("slow", json::object(), Limits{150ms, {}}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  std::this_thread::sleep_for(20ms);
  std::int64_t call_id = -1;
  bool cancelled = false;
  for (const auto& m : log_->all()) {
    if (m.at("method").as_string() == "tools/call") call_id = m.at("id").as_int64();
    if (m.at("method").as_string() == "notifications/cancelled") {
      cancelled = m.at("params").at("requestId").as_int64() == call_id;
    }
  }
  EXPECT_TRUE(cancelled);
  EXPECT_TRUE(session->alive());  // the session survives a slow tool
}

TEST_F(SessionTest, ProgressExtendsTheTimeout) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  // 530 ms in all, but never more than 100 ms without progress: a 250 ms window is enough.
  auto result = run(session->call_tool("progress", json::object(), Limits{250ms, {}}));
  EXPECT_TRUE(result.ok()) << result.error().message;
  // A total limit still bounds it.
  auto bounded = run(session->call_tool("progress", json::object(), Limits{250ms, 300ms}));
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.error().code, ErrorCode::kTimeout);
  EXPECT_NE(bounded.error().message.find("in all"), std::string::npos);
}

TEST_F(SessionTest, ServerRequestsAreAnswered) {
  auto session = make([](FakeServer& s) { s.ask_ping = true; });
  ASSERT_TRUE(run(session->start(2s)).ok());
  server_->push(parse(R"({"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}})"));
  std::this_thread::sleep_for(50ms);
  bool ping_answered = false, sampling_refused = false;
  for (const auto& m : log_->all()) {
    if (m.contains("method")) continue;
    if (m.at("id") == json::value("s1") && m.contains("result")) ping_answered = true;
    if (m.at("id") == json::value(9) && m.at("error").at("code").as_int64() == -32601) {
      sampling_refused = true;
    }
  }
  EXPECT_TRUE(ping_answered);
  EXPECT_TRUE(sampling_refused);
}

TEST_F(SessionTest, ACrashFailsWhatWaitsAndEndsTheSession) {
  auto session = make();
  ASSERT_TRUE(run(session->start(2s)).ok());
  auto pending = start(session->call_tool("slow", json::object(), Limits{5s, {}}));
  std::this_thread::sleep_for(50ms);
  server_->crash();
  auto result = pending.get();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("exited with code 3"), std::string::npos);
  EXPECT_FALSE(session->alive());
  auto after = run(session->call_tool("echo", json::object(), Limits{1s, {}}));
  EXPECT_FALSE(after.ok());
}

}  // namespace
}  // namespace hearth::mcp
