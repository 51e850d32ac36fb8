#include "handlers/mcp/mcp.hpp"

#include <sstream>

#include "handlers/mcp/server.hpp"
#include "handlers/testing.hpp"
#include "proc/testing.hpp"

namespace hearth::handlers::mcp {
namespace {

using namespace handlers::testing;

const bool kSigpipeIgnored = ignore_sigpipe();

fs::path fake_server() {
  const char* src = std::getenv("HEARTH_SOURCE_DIR");
  return fs::path(src != nullptr ? src : ".") / "src/handlers/mcp/testdata/fake_server.py";
}

/// Pids of the fake servers (python3 running fake_server.py) whose working directory is `dir`.
std::vector<pid_t> servers_in(const fs::path& dir) {
  return processes_in(dir, [](const fs::path& proc) {
    std::ifstream cmdline(proc / "cmdline");
    std::stringstream text;
    text << cmdline.rdbuf();
    return text.str().find("fake_server.py") != std::string::npos;
  });
}

class McpHandlerTest : public KindTest {
 protected:
  void SetUp() override {
    make_service("mcp");
    log_ = service_.dir / "received.jsonl";
    write_config(R"({"mcpServers": {
        "fake": {"command": "python3", "args": [")" +
                 fake_server().string() + R"("], "env": {"FAKE_MCP_LOG": ")" + log_.string() +
                 R"("}},
        "old": {"command": "python3", "args": [")" +
                 fake_server().string() +
                 R"("], "env": {"FAKE_MCP_VERSION": "2024-11-05"}},
        "missing": {"command": "no-such-mcp-server-here"}}})");
    options_.executor = io_.executor();
    kind_ = make_kind(options_);
  }
  void TearDown() override {
    handlers_.clear();
    kind_.reset();  // stops the servers
    for (int i = 0; i < 100 && !servers_in(service_.dir).empty(); ++i) {
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(servers_in(service_.dir).empty());
    remove_service();
  }
  void write_config(const std::string& text) { write("mcp-config.json", text); }
  Result<std::unique_ptr<Handler>> create(const std::string& handler_json,
                                          manifest::Permissions permissions = {}) {
    auto& ep = add_endpoint("ep" + std::to_string(endpoints_.size() + 1), handler_json,
                            std::move(permissions));
    return kind_->create(service_, ep);
  }
  /// A handler kept until the end of the test, as a loaded service keeps its handlers (a
  /// server lives as long as a handler using it).
  Handler* handler(const std::string& tool, const std::string& extra = "") {
    auto h = create(R"({"type":"mcp","server":"fake","tool":")" + tool + "\"" + extra + "}");
    EXPECT_TRUE(h.ok()) << (h.ok() ? "" : h.error().message);
    if (!h.ok()) return nullptr;
    handlers_.push_back(std::move(h).value());
    return handlers_.back().get();
  }
  Result<json::value> run(Handler& h, json::value input = json::object(),
                          std::chrono::milliseconds timeout = 10s) {
    return *start_call(io_.executor(), h, make_call(std::move(input), timeout, io_.executor()))
                .get();
  }
  /// Methods the fake server received, in order.
  std::vector<std::string> received() {
    std::vector<std::string> out;
    std::ifstream in(log_);
    std::string line;
    while (std::getline(in, line)) {
      auto m = parse(line);
      if (const auto* method = json::member(m, "method")) out.emplace_back(method->as_string());
    }
    return out;
  }

  proc::testing::IoThread io_;
  std::vector<std::unique_ptr<Handler>> handlers_;
  fs::path log_;
};

TEST_F(McpHandlerTest, CheckNamesEveryProblem) {
  EXPECT_EQ(problem_list(check(R"({"type":"mcp","server":"fake","tool":"echo"})")), "");
  EXPECT_EQ(problem_list(check(R"({"type":"mcp"})")),
            "endpoints[0].handler.server: is required: the name of a server in the service's "
            "mcp-config.json\nendpoints[0].handler.tool: is required: the name of the tool to "
            "call\n");
  EXPECT_NE(problem_list(check(R"({"type":"mcp","server":"a","tool":"b","timeout":-1})"))
                .find("handler.timeout"),
            std::string::npos);
  EXPECT_NE(problem_list(check(R"({"type":"mcp","server":"a","tool":"b","maxTotalTimeout":"x"})"))
                .find("handler.maxTotalTimeout"),
            std::string::npos);
}

TEST_F(McpHandlerTest, AServerMissingFromTheConfigIsRefusedAtLoad) {
  auto h = create(R"({"type":"mcp","server":"nope","tool":"echo"})");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("'nope' is not in mcp-config.json (it configures: fake, old, "
                                   "missing)"),
            std::string::npos)
      << h.error().message;
  fs::remove(service_.dir / "mcp-config.json");
  h = create(R"({"type":"mcp","server":"fake","tool":"echo"})");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("no mcp-config.json"), std::string::npos);
  write_config(R"({"mcpServers": {"fake": {"command": 1}}})");
  h = create(R"({"type":"mcp","server":"fake","tool":"echo"})");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("mcpServers.fake.command"), std::string::npos);
}

TEST_F(McpHandlerTest, AStdioCommandOutsideTheServiceFolderIsRefusedAtLoad) {
  // The jail lets a server read its program's folder: another service's must never be that.
  const fs::path other = service_.dir.parent_path() / (service_.dir.filename().string() + "-o");
  fs::create_directories(other);
  std::ofstream(other / "server.sh") << "#!/bin/sh\n";
  fs::permissions(other / "server.sh", fs::perms::owner_all);
  fs::create_symlink(other / "server.sh", service_.dir / "link.sh");
  write_config(R"({"mcpServers": {
      "abs": {"command": ")" +
               (other / "server.sh").string() + R"("},
      "rel": {"command": "../)" +
               other.filename().string() + R"(/server.sh"},
      "link": {"command": "./link.sh"},
      "path": {"command": "server.sh", "env": {"PATH": ")" +
               other.string() + R"("}},
      "system": {"command": "python3", "args": ["x.py"]}}})");
  for (const char* server : {"abs", "rel", "link", "path"}) {
    auto h = create(std::string(R"({"type":"mcp","server":")") + server + R"(","tool":"echo"})");
    ASSERT_FALSE(h.ok()) << server;
    EXPECT_NE(h.error().message.find("outside the service folder"), std::string::npos)
        << h.error().message;
    EXPECT_NE(h.error().message.find(std::string("server '") + server + "'"), std::string::npos);
  }
  EXPECT_TRUE(create(R"({"type":"mcp","server":"system","tool":"echo"})").ok());
  std::error_code ec;
  fs::remove_all(other, ec);
}

TEST_F(McpHandlerTest, StartsLazilyAndKeepsOneServerAcrossCalls) {
  auto h = handler("echo");
  EXPECT_TRUE(servers_in(service_.dir).empty());  // nothing runs before the first call
  auto first = run(*h, parse(R"({"text":"one"})"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->at("echo").as_string(), "one");
  auto second = run(*h, parse(R"({"text":"two"})"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->at("pid"), first->at("pid"));  // the same process
  const auto methods = received();
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "initialize"), 1);
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "tools/list"), 1);  // cached
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "tools/call"), 2);
  EXPECT_EQ(servers_in(service_.dir).size(), 1u);
}

TEST_F(McpHandlerTest, ContentBlocksWithoutStructuredContentAndIsError) {
  auto text = run(*handler("text"), parse(R"({"text":"x"})"));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(json::serialize(text.value()), R"([{"type":"text","text":"plain x"}])");
  auto failed = run(*handler("fail"));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(failed.error().message.find("it went wrong"), std::string::npos);
}

TEST_F(McpHandlerTest, AnUnknownToolFailsTheCallNotTheServer) {
  auto nope = run(*handler("nope"));
  ASSERT_FALSE(nope.ok());
  EXPECT_EQ(nope.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(nope.error().message.find("has no tool 'nope'"), std::string::npos);
  EXPECT_TRUE(run(*handler("echo")).ok());
}

TEST_F(McpHandlerTest, ACrashFailsTheCallAndTheNextCallStartsItAgain) {
  auto echo = handler("echo");
  auto before = run(*echo);
  ASSERT_TRUE(before.ok());
  auto crashed = run(*handler("crash"));
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(crashed.error().message.find("exited with code 7"), std::string::npos)
      << crashed.error().message;
  EXPECT_NE(crashed.error().message.find("about to crash"), std::string::npos);
  auto after = run(*echo);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_NE(after->at("pid"), before->at("pid"));
}

TEST_F(McpHandlerTest, ATimeoutSendsCancelledAndTheServerStays) {
  auto started = run(*handler("echo"));  // the server starts first, not timed by 300 ms
  ASSERT_TRUE(started.ok()) << started.error().message;
  auto slow = handler("sleep", R"(,"timeout":300)");
  auto result = run(*slow);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  auto echo = run(*handler("echo"));
  ASSERT_TRUE(echo.ok());
  const auto methods = received();
  EXPECT_NE(std::find(methods.begin(), methods.end(), "notifications/cancelled"), methods.end());
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "initialize"), 1);
}

TEST_F(McpHandlerTest, ProgressExtendsTheTimeoutWithinTheTotal) {
  // 500 ms of work with progress every 100 ms: a 300 ms window suffices. The server is started
  // first, so that a slow start on a loaded machine is not counted in the window.
  ASSERT_TRUE(run(*handler("echo")).ok());
  auto ok = run(*handler("progress", R"(,"timeout":300)"));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->at("done"), json::value(true));
  auto bounded = run(*handler("progress", R"(,"timeout":300,"maxTotalTimeout":250)"));
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.error().code, ErrorCode::kTimeout);
}

TEST_F(McpHandlerTest, ListChangedRefreshesTheTools) {
  EXPECT_FALSE(run(*handler("added")).ok());
  ASSERT_TRUE(run(*handler("grow")).ok());
  std::this_thread::sleep_for(100ms);  // the notification reaches the session
  auto added = run(*handler("added"));
  ASSERT_TRUE(added.ok()) << added.error().message;
}

TEST_F(McpHandlerTest, ServerThatCannotStart) {
  auto missing = create(R"({"type":"mcp","server":"missing","tool":"x"})");
  ASSERT_TRUE(missing.ok());
  auto result = run(*missing.value());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerError);
  EXPECT_NE(result.error().message.find("command not found: no-such-mcp-server-here"),
            std::string::npos)
      << result.error().message;

  auto old = create(R"({"type":"mcp","server":"old","tool":"echo"})");
  ASSERT_TRUE(old.ok());
  auto refused = run(*old.value());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("speaks MCP 2024-11-05"), std::string::npos)
      << refused.error().message;
}

TEST_F(McpHandlerTest, ShutdownStopsServersAndRefusesLaterCalls) {
  auto h = handler("echo");
  ASSERT_TRUE(run(*h).ok());
  EXPECT_EQ(servers_in(service_.dir).size(), 1u);
  kind_->shutdown();
  for (int i = 0; i < 100 && !servers_in(service_.dir).empty(); ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(servers_in(service_.dir).empty());
  auto after = run(*h);
  ASSERT_FALSE(after.ok());
  EXPECT_NE(after.error().message.find("stopping"), std::string::npos);
}

// A replaced service (the daemon reloading it) gets new servers; calls on the old handlers keep
// the old server, which stops once those handlers are gone.
TEST_F(McpHandlerTest, AReleasedServiceKeepsItsServerUntilItsHandlersGo) {
  auto old_handler = create(R"({"type":"mcp","server":"fake","tool":"echo"})");
  ASSERT_TRUE(old_handler.ok());
  ASSERT_TRUE(run(*old_handler.value(), parse(R"({"text":"a"})")).ok());
  EXPECT_EQ(servers_in(service_.dir).size(), 1u);
  kind_->release(service_.dir);
  auto fresh = create(R"({"type":"mcp","server":"fake","tool":"echo"})");
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(run(*fresh.value(), parse(R"({"text":"b"})")).ok());
  EXPECT_EQ(servers_in(service_.dir).size(), 2u);
  ASSERT_TRUE(run(*old_handler.value(), parse(R"({"text":"c"})")).ok());
  old_handler.value().reset();
  for (int i = 0; i < 100 && servers_in(service_.dir).size() > 1; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(servers_in(service_.dir).size(), 1u);
  ASSERT_TRUE(run(*fresh.value(), parse(R"({"text":"d"})")).ok());
}

TEST_F(McpHandlerTest, ConcurrentFirstCallsShareOneStart) {
  auto h = handler("echo");
  std::vector<std::future<std::optional<Result<json::value>>>> calls;
  calls.reserve(8);
  for (int i = 0; i < 8; ++i) {
    calls.push_back(
        start_call(io_.executor(), *h, make_call(parse(R"({"text":"x"})"), 30s, io_.executor())));
  }
  for (auto& f : calls) EXPECT_TRUE(f.get()->ok());
  const auto methods = received();
  EXPECT_EQ(std::count(methods.begin(), methods.end(), "initialize"), 1);
}

}  // namespace
}  // namespace hearth::handlers::mcp
