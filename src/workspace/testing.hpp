#pragma once
/// Test helpers: a workspace folder written from YAML text, a JS worker pool for it, a store in
/// a temporary folder, and LAVS services played by a recording fake.

// GCC 12 reports -Wnull-dereference inside inlined Asio code (false positives in Boost headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "proc/testing.hpp"
#include "workspace/workspace.hpp"
#pragma GCC diagnostic pop

namespace hearth::workspace::testing {

/// Endpoints answered from a table; every call recorded.
class FakeServices : public Services {
 public:
  struct Call {
    std::string service, endpoint;
    json::value input;
    bool confidential = false;
  };
  /// The answer of service/endpoint: a function of the input.
  std::map<std::string, std::function<Result<json::value>(const json::value&)>> answers;

  boost::asio::awaitable<Result<json::value>> call(std::string service, std::string endpoint,
                                                   json::value input, std::string,
                                                   bool confidential) override {
    const std::string key = service + "/" + endpoint;
    std::function<Result<json::value>(const json::value&)> answer;
    {
      std::lock_guard lock(mu_);
      calls_.push_back({service, endpoint, input, confidential});
      if (auto it = answers.find(key); it != answers.end()) answer = it->second;
    }
    if (!answer) co_return Error::make(ErrorCode::kMethodNotFound, "no endpoint " + key);
    co_return answer(input);
  }

  boost::asio::awaitable<Result<std::shared_ptr<void>>> subscribe(
      std::string service, std::string endpoint, json::value,
      std::function<void(json::value)> on_item) override {
    std::lock_guard lock(mu_);
    feeds_[service + "/" + endpoint] = std::move(on_item);
    co_return std::shared_ptr<void>(std::make_shared<int>(0));
  }

  /// Sends an item to the subscriber of service/endpoint.
  void publish(const std::string& key, json::value item) {
    std::function<void(json::value)> feed;
    {
      std::lock_guard lock(mu_);
      feed = feeds_[key];
    }
    if (feed) feed(std::move(item));
  }

  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<Call> calls_;
  std::map<std::string, std::function<void(json::value)>> feeds_;
};

class WorkspaceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    static const bool sigpipe_ignored = (std::signal(SIGPIPE, SIG_IGN), true);
    (void)sigpipe_ignored;
    std::string pattern =
        (std::filesystem::temp_directory_path() / "hearth-workspace-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = std::filesystem::canonical(pattern);
    std::filesystem::create_directories(dir_ / "ws");
    auto store = Store::open(dir_ / "workspaces.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }

  void TearDown() override {
    if (workspace_) workspace_->close();
    workspace_.reset();
    if (pool_) pool_->stop();
    pool_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "ws" / name) << text;
  }

  /// Loads ws/workspace.yaml (written from `yaml`) and opens it: the workspace, or why it did
  /// not open. A definition with problems fails the test.
  Result<std::shared_ptr<Workspace>> try_open(const std::string& yaml, bool with_services = true) {
    write("workspace.yaml", yaml);
    Problems problems;
    auto def = load_definition(dir_ / "ws", problems);
    for (const auto& p : problems) ADD_FAILURE() << p.to_string();
    if (!def) return Error::make(ErrorCode::kInvalidParams, "the definition has problems");
    jsworker::PoolConfig config;
    config.service = "workspace:" + def->name;
    config.service_dir = dir_ / "ws";
    config.permissions.max_memory = def->limits.memory_bytes;
    if (def->grants.files) config.permissions.file_access = def->grants.files;
    config.size = 1;
    config.worker_program = jsworker::default_worker_program();
    pool_ = std::make_shared<jsworker::Pool>(io_.executor(), config);
    pool_->start();
    Workspace::Options options;
    options.pool = pool_;
    options.store = store_.get();
    options.blocking = &blocking_;
    options.services = with_services ? &services_ : nullptr;
    workspace_ = std::make_shared<Workspace>(io_.executor(), std::move(*def), options);
    auto opened = wait(workspace_->open());
    if (!opened.ok()) return opened.error();
    return workspace_;
  }

  /// try_open that must succeed; null (and a failed test) otherwise.
  std::shared_ptr<Workspace> open(const std::string& yaml, bool with_services = true) {
    auto opened = try_open(yaml, with_services);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? opened.value() : nullptr;
  }

  template <class T>
  T wait(boost::asio::awaitable<T> work) {
    auto future = boost::asio::co_spawn(
        io_.executor(),
        [w = std::move(work)]() mutable -> boost::asio::awaitable<std::optional<T>> {
          co_return co_await std::move(w);
        },
        boost::asio::use_future);
    return *future.get();
  }

  Result<json::object> exec(const std::string& script, bool dry_run = false,
                            std::optional<std::int64_t> expected = std::nullopt) {
    ExecuteRequest r;
    r.script = script;
    r.dry_run = dry_run;
    r.expected_version = expected;
    return wait(workspace_->execute(std::move(r)));
  }

  json::value value_of(const std::string& state) {
    auto v = workspace_->state(state, true);
    return v.ok() ? v.value() : json::value("<error>");
  }

  proc::testing::IoThread io_;
  BlockingExecutor blocking_{1};
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::shared_ptr<jsworker::Pool> pool_;
  std::shared_ptr<Workspace> workspace_;
  FakeServices services_;
};

}  // namespace hearth::workspace::testing
