#include "agentapp/backend/backends.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <fstream>
#include <future>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/package/test_package.hpp"
#include "agentapp/records/records.hpp"
#include "agentapp/store/services.hpp"
#include "agentapp/store/test_apps.hpp"
#include "proc/testing.hpp"

namespace hearth::agentapp {
namespace {

namespace asio = boost::asio;
using proc::testing::IoThread;
using proc::testing::wait_until;
using testing::PackageDir;

constexpr std::string_view kAppMd = R"(---
name: notes
description: Notes with a backend.
version: 1.0.0
status: ready
appType: agent-app
requires:
  capabilities:
    lime.storage: ^1.0
permissions:
  - key: db
    scope: storage
    access: read-write
services:
  - key: worker
    kind: app-backend
    language: python
    executionPlane: client-local
    protocol: stdio-jsonrpc
    command: services/backend.py
    resourceLimits:
      timeoutMs: 2000
  - key: tally
    kind: worker
    language: javascript
    entry: dist/worker/tally.mjs
    resourceLimits:
      timeoutMs: 5000
---
)";

/// A worker module: each call runs an exported function with (input, ctx).
constexpr std::string_view kWorker = R"(
export async function count(input, ctx) {
  await ctx.invoke("lime.storage", "put", { key: "n", value: input.n });
  const got = await ctx.invoke("lime.storage", "get", { key: "n" });
  let denied = null;
  try {
    await ctx.invoke("lime.secrets", "get", {});
  } catch (e) {
    denied = { name: e.name, code: e.rpcCode, stage: e.data.stage };
  }
  return { value: got.value, denied };
}
export function deniedUncaught(input, ctx) {
  return ctx.invoke("lime.agent", "startTask", {});
}
)";

/// A backend that answers hearth's calls and makes its own through the bridge.
constexpr std::string_view kBackend = R"(#!/usr/bin/env python3
import json, os, sys
next_id = [0]
extra = []
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def host(method, params):
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": "b%d" % next_id[0], "method": method, "params": params})
    return json.loads(sys.stdin.readline())
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    method, p = m["method"], m.get("params") or {}
    if method == "initialize":
        r = {"pid": os.getpid(), "app": os.environ.get("HEARTH_APP"), "hello": p}
    elif method == "echo":
        r = p
    elif method == "crash":
        os._exit(3)
    elif method == "sleep":
        import time; time.sleep(10); r = {}
    elif method == "fail":
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": 7, "message": "no luck"}})
        continue
    elif method == "host":
        r = host(p["method"], p["params"])
    elif method == "tools/list":
        r = {"tools": [{"name": "add_item", "description": "Add an item.",
                        "inputSchema": {"type": "object", "required": ["item"],
                                        "properties": {"item": {"type": "string"}}}},
                       {"name": "no_schema"}, {"description": "no name"}] + extra}
    elif method == "tools/call":
        if p["name"] == "add_item":
            r = {"content": [{"type": "text", "text": "added " + p["arguments"]["item"]}],
                 "structuredContent": {"added": p["arguments"]["item"]}}
        else:
            r = {"content": [{"type": "text", "text": "no tool " + p["name"]}], "isError": True}
    elif method == "grow":
        extra.append({"name": "grown", "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        r = {}
    else:
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}})
        continue
    send({"jsonrpc": "2.0", "id": m["id"], "result": r})
)";

/// The daemon's log lines while it lives (spdlog's default logger, replaced and restored).
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(4096)) {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const {
    std::string out;
    for (const auto& line : sink_->last_formatted()) out += line;
    return out;
  }
  int count(std::string_view needle) const {
    int n = 0;
    for (const auto& line : sink_->last_formatted()) {
      n += line.find(needle) != std::string::npos ? 1 : 0;
    }
    return n;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

struct BackendsTest : ::testing::Test {
  PackageDir state{"state"};
  PackageDir package{"notes"};
  IoThread io;
  std::unique_ptr<AppStore> store;
  std::unique_ptr<Bridge> bridge;
  // After the bridge: its threads finish their work (evidence records) before it goes.
  BlockingExecutor blocking{2};
  std::shared_ptr<Backends> backends;

  void SetUp() override {
    package.write("APP.md", kAppMd);
    package.write("services/backend.py", kBackend);
    package.write("dist/worker/tally.mjs", kWorker);
    store = AppStore::open(state.path(), storage::sqlite_engine()).value();
    store->set_readiness_context(host_readiness(nullptr));
    ASSERT_TRUE(store->install(package.path(), true).ok());
    bridge = std::make_unique<Bridge>(*store);
  }
  void TearDown() override {
    if (backends) backends->stop();
  }

  /// Installs the package again with `script` as its backend (installed packages are
  /// read-only).
  void reinstall_with_backend(std::string_view script) {
    package.write("services/backend.py", script);
    ASSERT_TRUE(store->uninstall("notes", DataPolicy::kDelete).ok());
    ASSERT_TRUE(store->install(package.path(), true).ok());
  }

  void start(std::chrono::milliseconds poll = std::chrono::milliseconds(50),
             std::chrono::milliseconds start_timeout = std::chrono::milliseconds(10'000)) {
    BackendOptions options;
    options.start_timeout = start_timeout;
    jail::JailOptions jail_options;
    jail_options.insecure_no_sandbox = true;  // the jail itself: tests/integration
    options.jail = std::make_shared<const jail::Jail>(jail::Jail::create(jail_options).value());
    options.poll = poll;
    options.backoff_initial = std::chrono::milliseconds(100);
    options.backoff_max = std::chrono::milliseconds(400);
    backends = Backends::create(io.executor(), *store, *bridge, blocking, options);
    backends->start();
  }

  /// Runs `work` on the io thread and waits for its value.
  template <class T>
  T run(asio::awaitable<T> work) {
    std::promise<T> promise;
    auto future = promise.get_future();
    asio::co_spawn(
        io.executor(),
        [&promise, work = std::move(work)]() mutable -> asio::awaitable<void> {
          promise.set_value(co_await std::move(work));
        },
        asio::detached);
    return future.get();
  }

  Result<json::value> call(const std::string& method, std::string_view params = "{}",
                           const std::string& service = "worker") {
    return run(backends->call("notes", service, method, json::parse(params)));
  }

  json::array evidence() {
    auto data = AppData::open(store->data_dir("notes")).value();
    EvidenceLog log(data->database(), Provenance{"notes", "1.0.0", "", ""});
    return log.entries(0).value();
  }

  bool evidenced(const char* kind) {
    for (const auto& e : evidence()) {
      if (e.at("kind") == kind) return true;
    }
    return false;
  }

  json::array status() { return run(backends->status("notes")); }
  std::string state_of() {
    auto s = status();
    return s.empty() ? "absent" : std::string(s.front().at("state").as_string());
  }
};

TEST_F(BackendsTest, PlanRunsClientLocalStdioBackendsWithTheirInterpreter) {
  const auto manifest = read_manifest(package.path()).value();
  const auto plan =
      plan_backends(manifest.front_matter, std::filesystem::canonical(package.path()));
  ASSERT_EQ(plan.run.size(), 1u);
  EXPECT_EQ(plan.run[0].argv.front(), "python3");
  EXPECT_EQ(plan.run[0].call_timeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(plan.run[0].network, "deny-by-default");

  const auto other = json::parse(R"({"services":[
    {"key":"web","kind":"app-backend","executionPlane":"client-local","protocol":"local-http",
     "command":"x"},
    {"key":"cloud","kind":"app-backend","executionPlane":"cloud-remote","protocol":"remote-http"},
    {"key":"out","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "command":"../elsewhere/run.sh"},
    {"key":"net","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "command":"python3","network":"remote-allowed"},
    {"key":"nolang","kind":"app-backend","executionPlane":"client-local",
     "protocol":"stdio-jsonrpc","path":"APP.md"},
    {"key":"w","kind":"worker"}]})")
                         .as_object();
  const auto refused = plan_backends(other, std::filesystem::canonical(package.path()));
  EXPECT_TRUE(refused.run.empty());
  ASSERT_EQ(refused.not_run.size(), 5u);
  EXPECT_NE(refused.not_run[0].reason.find("local-http"), std::string::npos);
  EXPECT_NE(refused.not_run[1].reason.find("cloud-remote"), std::string::npos);
  EXPECT_NE(refused.not_run[2].reason.find("not a file inside the package"), std::string::npos);
  EXPECT_NE(refused.not_run[3].reason.find("remote-allowed"), std::string::npos);
  EXPECT_NE(refused.not_run[4].reason.find("interpreter"), std::string::npos);
}

TEST_F(BackendsTest, PlanRunsACommandWithItsArgsAsMcpServerConfigsWriteThem) {
  const auto dir = std::filesystem::canonical(package.path());
  const std::string script = (dir / "services/backend.py").string();
  const auto plan = plan_backends(json::parse(R"({"services":[
    {"key":"args","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "command":"python3","args":["./services/backend.py"]},
    {"key":"path","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "command":"python3","path":"./services/backend.py"},
    {"key":"entry","kind":"app-backend","executionPlane":"client-local",
     "protocol":"stdio-jsonrpc","command":["python3","-u"],"entry":"services/backend.py",
     "path":"services"},
    {"key":"both","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "command":"python3 -u","args":["services/backend.py","--verbose"],
     "path":"services/backend.py"},
    {"key":"file","kind":"app-backend","executionPlane":"client-local","protocol":"stdio-jsonrpc",
     "path":"services/backend.py","args":["--port","0"]}]})")
                                      .as_object(),
                                  dir);
  ASSERT_EQ(plan.run.size(), 5u) << (plan.not_run.empty() ? "" : plan.not_run[0].reason);
  using Argv = std::vector<std::string>;
  EXPECT_EQ(plan.run[0].argv, (Argv{"python3", script}));
  EXPECT_EQ(plan.run[0].script.string(), script);
  EXPECT_EQ(plan.run[1].argv, (Argv{"python3", script}));
  EXPECT_EQ(plan.run[2].argv, (Argv{"python3", "-u", script}));
  EXPECT_EQ(plan.run[3].argv, (Argv{"python3", "-u", script, "--verbose"}));
  EXPECT_EQ(plan.run[4].argv, (Argv{"python3", script, "--port", "0"}));

  // An interpreter with nothing to run would read its program from hearth's JSON-RPC.
  const auto refused = plan_backends(json::parse(R"({"services":[
    {"key":"alone","kind":"app-backend","executionPlane":"client-local",
     "protocol":"stdio-jsonrpc","command":"python3","path":"./services/missing.py"},
    {"key":"badargs","kind":"app-backend","executionPlane":"client-local",
     "protocol":"stdio-jsonrpc","command":"python3","args":"services/backend.py"},
    {"key":"badword","kind":"app-backend","executionPlane":"client-local",
     "protocol":"stdio-jsonrpc","command":["python3",3]}]})")
                                         .as_object(),
                                     dir);
  EXPECT_TRUE(refused.run.empty());
  ASSERT_EQ(refused.not_run.size(), 3u);
  EXPECT_NE(refused.not_run[0].reason.find("names no script"), std::string::npos)
      << refused.not_run[0].reason;
  EXPECT_NE(refused.not_run[1].reason.find("args must be a list"), std::string::npos);
  EXPECT_NE(refused.not_run[2].reason.find("list of strings"), std::string::npos);
}

TEST_F(BackendsTest, NothingRunsBeforeTheAppIsEnabled) {
  start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(state_of(), "absent");
  auto r = call("echo");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not enabled"), std::string::npos) << r.error().message;
}

TEST_F(BackendsTest, CallsTheBackendAndItsOwnCallsGoThroughTheBridgeAsItsApp) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  auto echo = call("echo", R"({"a":[1,2]})");
  ASSERT_TRUE(echo.ok()) << echo.error().message;
  EXPECT_EQ(echo.value(), json::parse(R"({"a":[1,2]})"));

  // Granted at enable (the review listed lime.storage): the put lands in the app's storage.
  auto put = call("host", R"({"method":"capability/invoke","params":{"capability":"lime.storage",
      "method":"put","params":{"key":"k","value":{"n":1}}}})");
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_TRUE(put.value().as_object().contains("result")) << json::serialize(put.value());
  Invocation get{"notes", "", "lime.storage", "get", json::parse(R"({"key":"k"})")};
  auto got = bridge->invoke(get);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got.value().at("value"), json::parse(R"({"n":1})"));

  // Acting for another app is refused, whatever it names.
  auto other = call("host", R"({"method":"capability/invoke","params":{"appId":"someone",
      "capability":"lime.storage","method":"get","params":{"key":"k"}}})");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other.value().at("error").at("code"), -32001);
  EXPECT_EQ(other.value().at("error").at("data").at("stage"), "identity");
  // And nothing but the bridge's two methods is served.
  auto stray = call("host", R"({"method":"lavs/manifest","params":{}})");
  ASSERT_TRUE(stray.ok());
  EXPECT_EQ(stray.value().at("error").at("code"), -32601);

  // The evidence names the backend as the caller.
  bool by_backend = false;
  for (const auto& e : evidence()) {
    if (e.at("kind") == "capability.invoked" && e.at("detail").at("caller") == "backend:worker") {
      by_backend = true;
    }
  }
  EXPECT_TRUE(by_backend);
}

TEST_F(BackendsTest, BackendErrorsAndTimeoutsComeBackAsErrors) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  auto failed = call("fail");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kHandlerError);
  EXPECT_EQ(failed.error().data.at("code"), 7);
  EXPECT_NE(failed.error().message.find("no luck"), std::string::npos);
  auto slow = call("sleep");
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::kTimeout);
}

TEST_F(BackendsTest, ACrashedBackendIsStartedAgainAfterABackoff) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(call("echo").ok());
  const auto first_pid = status().front().at("pid").as_int64();
  auto crashed = call("crash");
  ASSERT_FALSE(crashed.ok());
  EXPECT_NE(crashed.error().message.find("code 3"), std::string::npos) << crashed.error().message;
  // Restarting for the backoff (100 ms here: a busy machine may not look in time), then running.
  ASSERT_TRUE(wait_until(
      [&] {
        const auto st = status();
        return !st.empty() && st.front().at("starts").as_int64() == 2 &&
               st.front().at("state") == "running";
      },
      std::chrono::seconds(5)));
  auto s = status().front();
  EXPECT_TRUE(s.at("lastExit").is_string());
  EXPECT_EQ(s.at("starts"), 2);
  EXPECT_NE(s.at("pid").as_int64(), first_pid);
  EXPECT_TRUE(call("echo").ok());
  // The start, the exit and the new start are in the app's evidence.
  // The start, the exit and the new start are in the app's evidence (recorded off the strand).
  const auto count = [&](const char* kind) {
    int n = 0;
    for (const auto& e : evidence()) n += e.at("kind") == kind ? 1 : 0;
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return count("backend.started") == 2; }, std::chrono::seconds(5)));
  EXPECT_EQ(count("backend.exited"), 1);
}

TEST_F(BackendsTest, ABackendThatNeverComesUpIsFailingWithItsStderrAndIsLoggedOnce) {
  // What it writes differs at each try (a time stamp): still the same failure.
  reinstall_with_backend(
      "import sys, time\nsys.stderr.write('%f boom: the pantry file is missing\\n' % "
      "time.time())\nsys.exit(5)\n");
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  LogCapture log;
  start(std::chrono::milliseconds(20));
  json::value s;  // the snapshot that showed it waiting after its fourth start
  ASSERT_TRUE(wait_until(
      [&] {
        const auto list = status();
        if (list.empty()) return false;
        s = list.front();
        return s.at("starts").as_int64() >= 4 && s.at("state") == "failing";
      },
      std::chrono::seconds(10)));
  // 100, 200, 400 (the cap), 400 ms...
  EXPECT_LE(s.at("nextStartInMs").as_int64(), 400);
  EXPECT_NE(std::string(s.at("reason").as_string()).find("code 5"), std::string::npos)
      << json::serialize(s);
  EXPECT_GE(s.at("failures").as_int64(), 4);
  EXPECT_NE(std::string(s.at("stderrTail").as_string()).find("boom: the pantry file is missing"),
            std::string::npos)
      << json::serialize(s);
  // A call says why, with the same facts.
  auto r = call("echo");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().data.at("state"), "failing");
  EXPECT_NE(r.error().message.find("code 5"), std::string::npos) << r.error().message;
  // The first failure is logged and evidenced; the same failure again is not, at every start.
  EXPECT_EQ(log.count("exited with code 5"), 1) << log.text();
  EXPECT_TRUE(wait_until([&] { return evidenced("backend.failed"); }, std::chrono::seconds(5)));
  int failed_entries = 0;
  for (const auto& e : evidence()) {
    failed_entries += e.at("kind") == "backend.failed" ? 1 : 0;
    EXPECT_NE(e.at("kind"), "backend.exited");  // it never ran
  }
  EXPECT_EQ(failed_entries, 1);
  // What `hearth app show` reads: the report, and a failing check in the readiness.
  ASSERT_TRUE(wait_until(
      [&] {
        auto reports = store->backend_reports("notes");
        return reports.ok() && !reports.value().empty() &&
               reports.value().front().at("failures").as_int64() >= 2;
      },
      std::chrono::seconds(5)));
  const auto shown = store->show("notes").value();
  ASSERT_EQ(shown.at("backends").as_array().size(), 1u) << json::serialize(shown.at("backends"));
  EXPECT_NE(json::serialize(shown.at("backends")).find("boom: the pantry file is missing"),
            std::string::npos);
  const auto& ready = shown.at("readiness");
  EXPECT_EQ(ready.at("status"), "ready-degraded") << json::serialize(ready);
  bool failing_check = false;
  for (const auto& c : ready.at("checks").as_array()) {
    if (c.at("kind") == "backend" && c.at("key") == "worker") {
      failing_check = c.at("state") == "failing" && c.at("severity") == "warning" &&
                      json::serialize(c).find("boom") != std::string::npos;
    }
  }
  EXPECT_TRUE(failing_check) << json::serialize(ready);
  // Starting the app is not held back by it: enabling only reads the static readiness.
  EXPECT_EQ(store->readiness("notes").value().at("status"), "ready");
}

TEST_F(BackendsTest, ABackendThatNeverAnswersInitializeIsFailingWithWhatItWroteToStderr) {
  reinstall_with_backend(
      "import sys, time\nsys.stderr.write('waiting for a pantry that never comes\\n')\n"
      "sys.stderr.flush()\ntime.sleep(60)\n");
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start(std::chrono::milliseconds(20), std::chrono::milliseconds(300));
  json::value s;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto list = status();
        if (list.empty()) return false;
        s = list.front();
        return s.at("state") == "failing";
      },
      std::chrono::seconds(10)));
  EXPECT_NE(std::string(s.at("reason").as_string()).find("did not answer initialize"),
            std::string::npos)
      << json::serialize(s);
  EXPECT_NE(std::string(s.at("stderrTail").as_string()).find("waiting for a pantry"),
            std::string::npos)
      << json::serialize(s);
}

TEST_F(BackendsTest, AFailingBackendThatComesUpIsRunningAndItsReportIsGone) {
  // It fails until a file outside the package exists (the unit tests' jail is a pass-through).
  const auto marker = state.path() / "pantry-ready";
  reinstall_with_backend("import os, sys\nif not os.path.exists('" + marker.string() +
                         "'):\n    sys.stderr.write('not yet\\n')\n    sys.exit(4)\n" +
                         std::string(kBackend));
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  LogCapture log;
  start(std::chrono::milliseconds(20));
  ASSERT_TRUE(wait_until(
      [&] {
        auto reports = store->backend_reports("notes");
        return reports.ok() && !reports.value().empty();
      },
      std::chrono::seconds(10)));
  std::ofstream(marker) << "ok";
  ASSERT_TRUE(wait_until([&] { return state_of() == "running"; }, std::chrono::seconds(10)));
  ASSERT_TRUE(call("echo").ok());
  EXPECT_TRUE(wait_until([&] { return store->backend_reports("notes").value().empty(); },
                         std::chrono::seconds(5)));
  EXPECT_EQ(store->show("notes").value().at("readiness").at("status"), "ready");
  EXPECT_FALSE(status().front().as_object().contains("stderrTail"));
  EXPECT_EQ(log.count("is running again"), 1) << log.text();
}

TEST_F(BackendsTest, TheBackendsToolsAreListedAndCalledAsMcpServersDo) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  // Asked for at once: the backend starts for it.
  auto listed = run(backends->tools("notes"));
  EXPECT_TRUE(listed.at("unavailable").as_array().empty()) << json::serialize(listed);
  const auto& tools = listed.at("tools").as_array();
  ASSERT_EQ(tools.size(), 2u) << json::serialize(listed);  // the one without a name is left out
  EXPECT_EQ(tools[0].at("name"), "add_item");
  EXPECT_EQ(tools[0].at("service"), "worker");
  EXPECT_EQ(tools[0].at("description"), "Add an item.");
  EXPECT_EQ(tools[0].at("inputSchema").at("required").at(0), "item");
  EXPECT_EQ(json::string_member(tools[0], "packageHash"),
            store->find("notes").value().package_hash);
  EXPECT_EQ(tools[1].at("inputSchema"), json::parse(R"({"type":"object"})"));
  auto called = call("tools/call", R"({"name":"add_item","arguments":{"item":"flour"}})");
  ASSERT_TRUE(called.ok()) << called.error().message;
  EXPECT_EQ(called.value().at("structuredContent").at("added"), "flour");
  EXPECT_EQ(status().front().at("tools"), json::parse(R"(["add_item","no_schema"])"));
  // Its list changed (MCP's notification): asked for again.
  ASSERT_TRUE(call("grow").ok());
  ASSERT_TRUE(
      wait_until([&] { return run(backends->tools("notes")).at("tools").as_array().size() == 3; },
                 std::chrono::seconds(5)));
}

TEST_F(BackendsTest, ABackendWithoutToolsListHasNoTools) {
  reinstall_with_backend(R"(import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        out = {"jsonrpc": "2.0", "id": m["id"], "result": {}}
    elif m["method"] == "ping":
        out = {"jsonrpc": "2.0", "id": m["id"], "result": "pong"}
    else:
        out = {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}}
    sys.stdout.write(json.dumps(out) + "\n"); sys.stdout.flush()
)");
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  auto listed = run(backends->tools("notes"));
  EXPECT_TRUE(listed.at("tools").as_array().empty()) << json::serialize(listed);
  EXPECT_TRUE(listed.at("unavailable").as_array().empty()) << json::serialize(listed);
  const auto s = status().front();
  EXPECT_EQ(s.at("state"), "running");
  EXPECT_FALSE(s.as_object().contains("toolsProblem")) << json::serialize(s);
  // Its own methods still work.
  auto pong = call("ping");
  ASSERT_TRUE(pong.ok()) << pong.error().message;
  EXPECT_EQ(pong.value(), "pong");
}

TEST_F(BackendsTest, AFailingBackendsToolsAreUnavailableWithTheReason) {
  reinstall_with_backend("import sys\nsys.stderr.write('no pantry\\n')\nsys.exit(2)\n");
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(wait_until([&] { return state_of() == "failing"; }, std::chrono::seconds(10)));
  auto listed = run(backends->tools("notes"));
  EXPECT_TRUE(listed.at("tools").as_array().empty());
  ASSERT_EQ(listed.at("unavailable").as_array().size(), 1u) << json::serialize(listed);
  const auto& why = listed.at("unavailable").at(0);
  EXPECT_EQ(why.at("service"), "worker");
  EXPECT_EQ(why.at("state"), "failing");
  EXPECT_NE(json::serialize(why).find("no pantry"), std::string::npos) << json::serialize(why);
}

TEST_F(BackendsTest, DisablingTheAppStopsItsBackend) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(call("echo").ok());
  const int pid = static_cast<int>(status().front().at("pid").as_int64());
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(store->set_enabled("notes", false).ok());
  ASSERT_TRUE(wait_until([&] { return status().empty(); }, std::chrono::seconds(5)));
  EXPECT_TRUE(wait_until([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(5)));
  auto r = call("echo");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not enabled"), std::string::npos);
}

TEST_F(BackendsTest, AWorkerModuleRunsInAJsWorkerAndReachesTheBridgeAsItsApp) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  auto r = call("count", R"({"n":41})", "tally");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().at("value"), 41);
  const auto& denied = r.value().at("denied");
  EXPECT_EQ(denied.at("name"), "PermissionDeniedError");
  EXPECT_EQ(denied.at("code"), -32001);
  EXPECT_EQ(denied.at("stage"), "declared");
  // A denial nobody catches fails the call with -32001.
  auto uncaught = call("deniedUncaught", "{}", "tally");
  ASSERT_FALSE(uncaught.ok());
  EXPECT_EQ(uncaught.error().code, ErrorCode::kPermissionDenied) << uncaught.error().message;
  // A function the module does not export.
  EXPECT_FALSE(call("nothing", "{}", "tally").ok());
  // The worker's calls are evidence, with the worker as the caller.
  bool by_worker = false;
  for (const auto& e : evidence()) {
    if (e.at("kind") == "capability.invoked" && e.at("detail").at("caller") == "worker:tally") {
      by_worker = true;
    }
  }
  EXPECT_TRUE(by_worker);
  const auto listed = status();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].at("kind"), "worker");
  EXPECT_EQ(listed[1].at("state"), "warm");
}

TEST_F(BackendsTest, AnUpgradeRestartsTheBackendFromTheNewPackage) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(call("echo").ok());
  std::string md(kAppMd);
  md.replace(md.find("version: 1.0.0"), 14, "version: 1.1.0");
  package.write("APP.md", md);
  auto upgraded = store->upgrade(package.path(), true, true);
  ASSERT_TRUE(upgraded.ok()) << upgraded.error().message;
  ASSERT_TRUE(upgraded.value().upgraded);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto s = status();
        return !s.empty() && s.front().at("version") == "1.1.0" &&
               s.front().at("state") == "running";
      },
      std::chrono::seconds(5)));
  auto hello = call("echo", R"({"v":2})");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  // Back to the old package: its backend again.
  ASSERT_TRUE(store->rollback("notes").ok());
  EXPECT_TRUE(wait_until(
      [&] {
        const auto s = status();
        return !s.empty() && s.front().at("version") == "1.0.0";
      },
      std::chrono::seconds(5)));
}

/// The app's log entries of `action`.
std::vector<json::object> logged(AppStore& store, const char* action) {
  std::vector<json::object> out;
  const auto shown = store.show("notes");
  for (const auto& e : shown.value().at("log").as_array()) {
    if (e.at("action").as_string() == action) out.push_back(e.as_object());
  }
  return out;
}

TEST_F(BackendsTest, AtTheDaemonsStartAnAppWhoseFilesChangedIsDisabledAndNothingOfItRuns) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  const auto dir = store->find("notes").value().dir;
  testing::change_installed(dir, "services/backend.py", "import os\nos.system('id')\n");
  start();
  ASSERT_TRUE(
      wait_until([&] { return !store->find("notes").value().enabled; }, std::chrono::seconds(5)));
  const auto failed = logged(*store, "integrity-failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("detail").at("when"), "daemon start");
  EXPECT_EQ(failed[0].at("detail").at("problems").at(0),
            "services/backend.py changed since install");
  auto r = call("echo");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not enabled"), std::string::npos) << r.error().message;
  EXPECT_TRUE(status().empty());
  EXPECT_TRUE(wait_until([&] { return evidenced("integrity.failed"); }, std::chrono::seconds(5)));
}

TEST_F(BackendsTest, ABackendWhoseFileChangedIsNotStartedAgainAfterItExits) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(call("echo").ok());
  const auto dir = store->find("notes").value().dir;
  testing::change_installed(dir, "services/backend.py", "import os\nos.system('id')\n");
  EXPECT_FALSE(call("crash").ok());
  // The restart checks the files first: the app is disabled instead, and nothing runs.
  ASSERT_TRUE(
      wait_until([&] { return !store->find("notes").value().enabled; }, std::chrono::seconds(5)));
  ASSERT_TRUE(wait_until([&] { return status().empty(); }, std::chrono::seconds(5)));
  const auto failed = logged(*store, "integrity-failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("detail").at("when"), "backend restart");
  EXPECT_EQ(failed[0].at("detail").at("problems").at(0),
            "services/backend.py changed since install");
  const auto started = [&] {
    int n = 0;
    for (const auto& e : evidence()) n += e.at("kind") == "backend.started" ? 1 : 0;
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return evidenced("integrity.failed"); }, std::chrono::seconds(5)));
  EXPECT_EQ(started(), 1);
}

TEST_F(BackendsTest, AWorkerModuleChangedSinceInstallIsNotRun) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  start();
  ASSERT_TRUE(call("echo").ok());  // the first poll's check passed
  const auto dir = store->find("notes").value().dir;
  testing::change_installed(dir, "dist/worker/tally.mjs",
                            "export function count() { return 'not what was installed'; }\n");
  auto r = call("count", R"({"n":1})", "tally");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(r.error().message.find("dist/worker/tally.mjs changed since install"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(store->find("notes").value().enabled);
  EXPECT_EQ(logged(*store, "integrity-failed").at(0).at("detail").at("when"), "worker start");
  // The app's backend stops with it.
  EXPECT_TRUE(wait_until([&] { return status().empty(); }, std::chrono::seconds(5)));
}

TEST_F(BackendsTest, WithoutAJailNothingStarts) {
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  BackendOptions options;
  options.poll = std::chrono::milliseconds(50);
  backends = Backends::create(io.executor(), *store, *bridge, blocking, options);
  backends->start();
  auto r = call("echo");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("jail"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace hearth::agentapp
