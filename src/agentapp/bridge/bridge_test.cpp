#include "agentapp/bridge/bridge.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

constexpr std::string_view kAppMd = R"(---
name: tasks
description: Tasks with a summary artifact.
version: 2.0.0
status: ready
appType: agent-app
requires:
  capabilities:
    lime.storage: ^1.0
    lime.artifacts: ^1.0
    lime.evidence: ^1.0
entries:
  - key: ask
    kind: command
    title: Ask
    command: ask
    requiredCapabilities: [lime.agent, lime.files]
permissions:
  - key: db
    scope: storage
    access: read-write
  - key: outputs
    scope: artifact
    access: write
storage:
  namespace: tasks
  migrations: storage/migrations
artifactTypes:
  - key: summary
    schema: artifacts/summary.schema.json
  - key: free-text
---
)";

struct BridgeTest : ::testing::Test {
  PackageDir state{"state"};
  PackageDir package{"tasks"};
  std::unique_ptr<AppStore> store;
  std::unique_ptr<Bridge> bridge;

  void SetUp() override {
    package.write("APP.md", kAppMd);
    package.write("storage/migrations/001.sql", "CREATE TABLE tasks (title TEXT);");
    package.write("artifacts/summary.schema.json",
                  R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
                  R"("required":["done"],"properties":{"done":{"type":"integer"}}})");
    store = AppStore::open(state.path(), storage::sqlite_engine()).value();
    store->set_readiness_context(host_readiness(nullptr));
    ASSERT_TRUE(store->install(package.path(), true).ok());
    bridge = std::make_unique<Bridge>(*store);
  }

  Result<json::value> call(std::string_view capability, std::string_view method,
                           std::string_view params = "{}", std::string_view workspace = "") {
    Invocation inv;
    inv.app = "tasks";
    inv.workspace = std::string(workspace);
    inv.capability = std::string(capability);
    inv.method = std::string(method);
    inv.params = json::parse(params);
    return bridge->invoke(inv);
  }

  static std::string stage_of(const Result<json::value>& r) {
    if (r.ok()) return "ok";
    if (r.error().code != ErrorCode::kPermissionDenied) return "error: " + r.error().message;
    return std::string(r.error().data.at("stage").as_string());
  }
};

TEST_F(BridgeTest, NothingRunsForAnAppThatIsNotEnabled) {
  EXPECT_EQ(stage_of(call("lime.storage", "get", R"({"key":"k"})")), "enabled");
  Invocation other;
  other.app = "nothing";
  other.capability = "lime.storage";
  other.method = "get";
  EXPECT_EQ(stage_of(bridge->invoke(other)), "enabled");
}

TEST_F(BridgeTest, ChecksDeclaredReadyGrantedAndPolicyInThatOrder) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  EXPECT_EQ(stage_of(call("lime.secrets", "get")), "declared");
  EXPECT_EQ(stage_of(call("lime.files", "read")), "ready");
  EXPECT_EQ(stage_of(call("lime.storage", "drop")), "ready");
  // lime.agent is provided through the App Server, not as a bridge call.
  const auto agent = call("lime.agent", "startTask");
  ASSERT_FALSE(agent.ok());
  EXPECT_EQ(agent.error().code, ErrorCode::kMethodNotFound);
  EXPECT_NE(agent.error().message.find("agentSession/start"), std::string::npos);
  ASSERT_TRUE(store->grant("tasks", "lime.storage", "w1", false, "person").ok());
  EXPECT_EQ(stage_of(call("lime.storage", "get", R"({"key":"k"})", "w1")), "granted");
  EXPECT_EQ(stage_of(call("lime.storage", "get", R"({"key":"k"})", "w2")), "ok");
  // Artifacts may be written (permission: write) but not read back (no read permission).
  EXPECT_EQ(stage_of(call("lime.artifacts", "list")), "policy");
  EXPECT_EQ(stage_of(call("lime.artifacts", "create", R"({"type":"unknown","content":{}})")),
            "policy");
  // Every denial is evidence.
  const auto exported = call("lime.evidence", "export");
  ASSERT_TRUE(exported.ok()) << exported.error().message;
  int denied = 0;
  for (const auto& e : exported.value().at("entries").as_array()) {
    if (e.at("kind") == "capability.denied") ++denied;
  }
  EXPECT_EQ(denied, 6);
  EXPECT_EQ(exported.value().at("verified"), true);
}

TEST_F(BridgeTest, StorageRunsTheAppsSqlAndValues) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  ASSERT_TRUE(call("lime.storage", "put", R"({"key":"filter","value":{"done":false}})").ok());
  EXPECT_EQ(json::serialize(call("lime.storage", "get", R"({"key":"filter"})").value()),
            R"({"key":"filter","value":{"done":false}})");
  ASSERT_TRUE(
      call("lime.storage", "query", R"j({"sql":"INSERT INTO tasks VALUES (?)","params":["a"]})j")
          .ok());
  EXPECT_EQ(json::serialize(
                call("lime.storage", "query", R"({"sql":"SELECT title FROM tasks"})").value()),
            R"({"rows":[["a"]]})");
  const auto attach = call("lime.storage", "query", R"({"sql":"ATTACH DATABASE 'x' AS x"})");
  ASSERT_FALSE(attach.ok());
  EXPECT_EQ(attach.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(BridgeTest, ArtifactsFollowTheirSchemaAndCarryProvenance) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  const auto bad = call("lime.artifacts", "create", R"({"type":"summary","content":{"done":"x"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidParams);
  const auto made = call("lime.artifacts", "create",
                         R"({"type":"summary","content":{"done":3},"metadata":{"title":"t"}})");
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(made.value().at("provenance").at("appVersion"), "2.0.0");
  EXPECT_EQ(made.value().at("mediaType"), "application/json");
  const auto text = call("lime.artifacts", "create", R"({"type":"free-text","content":"hello"})");
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text.value().at("mediaType"), "text/plain");
  const auto exported = call("lime.evidence", "export").value();
  std::vector<std::string> kinds;
  for (const auto& e : exported.at("entries").as_array()) {
    kinds.emplace_back(e.at("kind").as_string());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"artifact.created", "capability.invoked",
                                             "artifact.created", "capability.invoked"}));
}

TEST_F(BridgeTest, ListsCapabilitiesWithTheReasonsForBlockedOnes) {
  auto listed = bridge->list("tasks", "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed.value().at(0).at("status"), "blocked");
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  listed = bridge->list("tasks", "");
  std::map<std::string, std::string> status;
  for (const auto& c : listed.value()) {
    status[std::string(c.at("capability").as_string())] =
        std::string(c.at("status").as_string()) +
        (c.as_object().contains("stage") ? "/" + std::string(c.at("stage").as_string()) : "");
  }
  EXPECT_EQ(status["lime.storage"], "available");
  EXPECT_EQ(status["lime.evidence"], "available");
  EXPECT_EQ(status["lime.agent"], "available");  // through the App Server
  EXPECT_EQ(status["lime.files"], "blocked/ready");
}

TEST_F(BridgeTest, AnUpgradeIsSeenByTheNextCall) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  EXPECT_EQ(stage_of(call("lime.evidence", "export")), "ok");
  // 2.1.0 no longer declares lime.evidence.
  std::string md(kAppMd);
  md.replace(md.find("version: 2.0.0"), 14, "version: 2.1.0");
  md.erase(md.find("    lime.evidence: ^1.0\n"), 24);
  package.write("APP.md", md);
  ASSERT_TRUE(store->upgrade(package.path(), true, true).ok());
  EXPECT_EQ(stage_of(call("lime.evidence", "export")), "declared");
}

TEST_F(BridgeTest, AppsRecordTheirOwnEvidenceUnderTheirOwnKind) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  const auto entry =
      call("lime.evidence", "record", R"({"kind":"review.done","detail":{"by":"a"}})");
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  EXPECT_EQ(entry.value().at("kind"), "app.review.done");
}

}  // namespace
}  // namespace hearth::agentapp

namespace hearth::agentapp {
namespace {

TEST_F(BridgeTest, AKeptDatabaseIsDroppedWhenTheAppsDataIsDeletedAndMadeAgain) {
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  ASSERT_EQ(stage_of(call("lime.storage", "put", R"({"key":"k","value":1})")), "ok");
  auto before = call("lime.storage", "get", R"({"key":"k"})");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before.value().at("value"), 1);
  // Uninstalled with its data, installed again: a new, empty database, not the kept one.
  ASSERT_TRUE(store->uninstall("tasks", DataPolicy::kDelete).ok());
  ASSERT_TRUE(store->install(package.path(), true).ok());
  ASSERT_TRUE(store->set_enabled("tasks", true).ok());
  auto after = call("lime.storage", "get", R"({"key":"k"})");
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after.value().at("value").is_null());
  ASSERT_EQ(stage_of(call("lime.storage", "put", R"({"key":"k","value":2})")), "ok");
  // What it wrote is in the file the store sees (another connection reads it).
  auto fresh = AppData::open(store->data_dir("tasks")).value();
  EXPECT_EQ(fresh->get("k").value(), 2);
}

}  // namespace
}  // namespace hearth::agentapp

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

/// Where test.gate holds its calls, and what it saw: how many calls came in, and how many were
/// inside it at once at most.
class Gate {
 public:
  void enter(bool hold) {
    std::unique_lock lock(mutex_);
    ++entered_;
    ++inside_;
    most_inside_ = std::max(most_inside_, inside_);
    changed_.notify_all();
    // The deadline only ends a test whose gate is never opened; none waits for it to pass.
    if (hold) changed_.wait_for(lock, std::chrono::seconds(60), [this] { return open_; });
    --inside_;
  }
  /// Waits up to `limit` until `n` calls came in.
  bool entered(int n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [this, n] { return entered_ >= n; });
  }
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  int most_inside() {
    const std::lock_guard lock(mutex_);
    return most_inside_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int entered_ = 0;
  int inside_ = 0;
  int most_inside_ = 0;
};

/// test.gate: `hold` stays inside the capability until the gate opens, `pass` goes through.
class GateCapability final : public Capability {
 public:
  explicit GateCapability(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  std::string_view name() const override { return "test.gate"; }
  const std::vector<Method>& methods() const override {
    static const std::vector<Method> kMethods = {{"hold", {}}, {"pass", {"storage", "read"}}};
    return kMethods;
  }
  Result<json::value> invoke(CallContext& context) const override {
    gate_->enter(context.call.method == "hold");
    return json::value(json::object{{"app", context.call.app}});
  }

 private:
  std::shared_ptr<Gate> gate_;
};

std::string gate_app_md(std::string_view name) {
  return "---\nname: " + std::string(name) +
         "\ndescription: Calls through a gate.\nversion: 1.0.0\nstatus: ready\nappType: "
         "agent-app\nrequires:\n  capabilities:\n    lime.storage: ^1.0\n    test.gate: ^1.0\n"
         "permissions:\n  - key: db\n    scope: storage\n    access: read-write\n---\n";
}

/// Opens the gate when the test body ends, before the calls it holds are waited for.
struct OpenAtExit {
  Gate& gate;
  ~OpenAtExit() { gate.open(); }
};

struct GatedBridgeTest : ::testing::Test {
  PackageDir state{"state"};
  PackageDir alpha{"alpha"};
  PackageDir beta{"beta"};
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  std::unique_ptr<AppStore> store;
  std::unique_ptr<Bridge> bridge;

  void SetUp() override {
    auto registry = std::make_shared<CapabilityRegistry>();
    registry->add(make_storage_capability());
    registry->add(make_evidence_capability());
    registry->add(std::make_unique<GateCapability>(gate));
    store = AppStore::open(state.path(), storage::sqlite_engine()).value();
    store->set_readiness_context(host_readiness(*registry, nullptr));
    for (const auto* package : {&alpha, &beta}) {
      package->write("APP.md", gate_app_md(package->path().filename().string()));
      ASSERT_TRUE(store->install(package->path(), true).ok());
      ASSERT_TRUE(store->set_enabled(package->path().filename().string(), true).ok());
    }
    bridge = std::make_unique<Bridge>(*store, registry);
  }

  std::future<Result<json::value>> start(std::string_view app, std::string_view capability,
                                         std::string_view method, std::string_view params = "{}") {
    Invocation inv;
    inv.app = std::string(app);
    inv.capability = std::string(capability);
    inv.method = std::string(method);
    inv.params = json::parse(params);
    return std::async(std::launch::async, [this, inv] { return bridge->invoke(inv); });
  }
};

TEST_F(GatedBridgeTest, ARegisteredCapabilityPassesTheBridgesChecks) {
  Invocation inv;
  inv.app = "alpha";
  inv.capability = "test.gate";
  inv.method = "open";
  const auto unknown = bridge->invoke(inv);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().data.at("stage"), "ready");
  EXPECT_EQ(unknown.error().data.at("reason"), "test.gate has no method 'open' (hold, pass)");
  inv.method = "pass";
  const auto passed = bridge->invoke(inv);
  ASSERT_TRUE(passed.ok()) << passed.error().message;
  EXPECT_EQ(passed.value().at("app"), "alpha");
  ASSERT_TRUE(store->grant("alpha", "test.gate", "", false, "person").ok());
  const auto denied = bridge->invoke(inv);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().data.at("stage"), "granted");
  const auto evidence = bridge->evidence("alpha", 0).value();
  std::vector<std::string> kinds;
  for (const auto& e : evidence.at("entries").as_array()) {
    kinds.emplace_back(e.at("kind").as_string());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"capability.denied", "capability.invoked",
                                             "capability.denied"}));
}

TEST_F(GatedBridgeTest, AnAppsCallIsNotHeldUpByAnotherAppsCall) {
  std::future<Result<json::value>> held;
  std::future<Result<json::value>> other;
  std::future<bool> recorded;
  const OpenAtExit open_at_exit{*gate};
  held = start("alpha", "test.gate", "hold");
  ASSERT_TRUE(gate->entered(1, std::chrono::seconds(30)));
  // alpha's call is inside its capability: beta's calls run meanwhile, to the end.
  other = start("beta", "lime.storage", "put", R"({"key":"k","value":1})");
  recorded = std::async(std::launch::async, [this] {
    return bridge->record("beta", "test.note", json::object{}).ok();
  });
  EXPECT_TRUE(other.wait_for(std::chrono::seconds(30)) == std::future_status::ready)
      << "beta's call waited for alpha's";
  EXPECT_TRUE(recorded.wait_for(std::chrono::seconds(30)) == std::future_status::ready)
      << "beta's evidence waited for alpha's call";
  gate->open();
  const auto beta_put = other.get();
  EXPECT_TRUE(beta_put.ok()) << beta_put.error().message;
  EXPECT_TRUE(recorded.get());
  const auto alpha_held = held.get();
  EXPECT_TRUE(alpha_held.ok()) << alpha_held.error().message;
}

TEST_F(GatedBridgeTest, OneAppsCallsRunOneAtATime) {
  std::future<Result<json::value>> held;
  std::future<Result<json::value>> next;
  std::future<Result<json::value>> put;
  const OpenAtExit open_at_exit{*gate};
  held = start("alpha", "test.gate", "hold");
  ASSERT_TRUE(gate->entered(1, std::chrono::seconds(30)));
  next = start("alpha", "test.gate", "pass");
  put = start("alpha", "lime.storage", "put", R"({"key":"k","value":1})");
  // Neither gets into the app while its first call is inside: waiting for the second to come
  // in must end without it (a wait that ends early would be the failure).
  EXPECT_FALSE(gate->entered(2, std::chrono::milliseconds(300))) << "a second call got in";
  EXPECT_TRUE(put.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout)
      << "a put ran during another call of its app";
  gate->open();
  for (auto* call : {&held, &next, &put}) {
    const auto done = call->get();
    EXPECT_TRUE(done.ok()) << done.error().message;
  }
  EXPECT_EQ(gate->most_inside(), 1);
  // The three calls are one chain of evidence, in some order, each linked to the one before.
  const auto evidence = bridge->evidence("alpha", 0).value();
  EXPECT_EQ(evidence.at("entries").as_array().size(), 3U);
  EXPECT_EQ(evidence.at("verified"), true);
}

}  // namespace
}  // namespace hearth::agentapp
