#include "jail/jail.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace hearth::jail {
namespace {

namespace fs = std::filesystem;

class TempService : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/hearth-jail-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = fs::canonical(pattern);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void touch(const std::string& rel) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << "x";
  }
  std::string at(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

Capabilities all_mechanisms() {
  Capabilities caps;
  for (const char* name : {"user namespace", "pid namespace", "mount namespace", "ipc namespace",
                           "uts namespace", "network namespace", "landlock", "seccomp"})
    caps.mechanisms.push_back({name, true, ""});
  return caps;
}

TEST_F(TempService, GlobFolderBecomesATreeRule) {
  touch("data/todos.json");
  const auto rules = file_rules(dir_, {"./data/**/*.json"});
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data")});
  EXPECT_TRUE(rules.hide.empty());
}

TEST_F(TempService, ExistingLiteralFileIsAFileRule) {
  touch("notes.txt");
  EXPECT_EQ(file_rules(dir_, {"notes.txt"}).read_write, std::vector<std::string>{at("notes.txt")});
}

TEST_F(TempService, MissingLiteralFileOpensItsFolder) {
  fs::create_directories(dir_ / "db");
  EXPECT_EQ(file_rules(dir_, {"db/contacts.db-journal"}).read_write,
            std::vector<std::string>{at("db")});
}

TEST_F(TempService, MissingGlobFolderGrantsNothing) {
  EXPECT_TRUE(file_rules(dir_, {"data/**"}).read_write.empty());
}

TEST_F(TempService, PatternsLeavingTheFolderGrantNothing) {
  touch("x");
  const auto rules = file_rules(dir_, {"../x", "/etc/passwd", "data/../../x"});
  EXPECT_TRUE(rules.read_write.empty());
}

TEST_F(TempService, SymlinkOutOfTheFolderIsNotFollowed) {
  fs::create_directory_symlink("/etc", dir_ / "etc");
  EXPECT_TRUE(file_rules(dir_, {"etc/**"}).read_write.empty());
}

TEST_F(TempService, NegationsCoverWhatTheyMatch) {
  touch("data/a.json");
  touch("data/secret.json");
  touch("data/keys/k1.pem");
  const auto rules = file_rules(dir_, {"data/**", "!data/secret.json", "!data/**/*.pem"});
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data")});
  EXPECT_TRUE(contains(rules.hide, at("data/secret.json")));
  EXPECT_TRUE(contains(rules.hide, at("data/keys/k1.pem")));
  EXPECT_FALSE(contains(rules.hide, at("data/a.json")));
}

TEST_F(TempService, MissingMechanismRefusesWithItsName) {
  auto caps = all_mechanisms();
  caps.mechanisms.erase(caps.mechanisms.begin() + 6);  // landlock
  Jail jail({}, caps);
  Request request;
  request.service_dir = dir_;
  request.program = "/bin/true";
  auto plan = jail.plan(request);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(plan.error().message.find("landlock"), std::string::npos);
}

TEST_F(TempService, HostNetworkDoesNotNeedANetworkNamespace) {
  auto caps = all_mechanisms();
  caps.mechanisms.erase(caps.mechanisms.begin() + 5);  // network namespace
  Jail jail({}, caps);
  Request request;
  request.service_dir = dir_;
  request.program = "/bin/true";
  EXPECT_FALSE(jail.plan(request).ok());
  request.network_access = true;
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan.value().options.net, NetMode::kHost);
}

TEST_F(TempService, InsecureModeIsUnconfined) {
  JailOptions options;
  options.insecure_no_sandbox = true;
  Jail jail(options, {});
  Request request;
  request.service_dir = dir_;
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan.value().confined);
  EXPECT_FALSE(plan.value().options.jail);
}

TEST_F(TempService, PlanCarriesLimitsNetworkAndCode) {
  touch("scripts/service.py");
  touch("main.sh");
  touch("data/x.json");
  touch("secret.txt");
  Jail jail({}, all_mechanisms());
  Request request;
  request.service_dir = dir_;
  request.program = "/usr/bin/python3";
  request.args = {"scripts/service.py", "main.sh", "{{file}}", "--flag", "secret-not-a-file"};
  Jail only_scripts({}, all_mechanisms());
  Request scripts_only = request;
  scripts_only.args = {"scripts/service.py", "{{file}}"};
  auto narrow = only_scripts.plan(scripts_only);
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow.value().options.read_exec, std::vector<std::string>{at("scripts")});
  request.file_access = std::vector<std::string>{"data/*.json"};
  request.network_access = std::vector<std::string>{"api.example.com"};
  request.max_memory = 64 << 20;
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  const auto& o = plan.value().options;
  EXPECT_TRUE(o.jail);
  EXPECT_EQ(o.net, NetMode::kProxy);
  EXPECT_EQ(plan.value().proxy_hosts, std::vector<std::string>{"api.example.com"});
  EXPECT_TRUE(contains(plan.value().env, "HTTPS_PROXY=http://127.0.0.1:3128"));
  EXPECT_EQ(o.address_space, 64u << 20);
  EXPECT_TRUE(contains(o.read_exec, at("scripts")));  // a file: its folder
  EXPECT_TRUE(contains(o.read_exec, dir_.string()));  // main.sh at the root: the root
  EXPECT_FALSE(contains(o.read_exec, at("secret-not-a-file")));
  EXPECT_EQ(o.read_write, std::vector<std::string>{at("data")});
}

TEST_F(TempService, APackageInNodeModulesGetsTheWholeTree) {
  touch("node_modules/@scope/server/dist/index.js");
  touch("node_modules/dep/index.js");
  touch("tools/run.js");
  Jail jail({}, all_mechanisms());
  Request request;
  request.service_dir = dir_;
  request.program = "/usr/bin/node";
  request.args = {"node_modules/@scope/server/dist/index.js", "tools/run.js"};
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  const auto& rx = plan.value().options.read_exec;
  // The package's dependencies resolve in node_modules: the tree, not just dist/.
  EXPECT_TRUE(contains(rx, at("node_modules")));
  EXPECT_FALSE(contains(rx, at("node_modules/@scope/server/dist")));
  EXPECT_TRUE(contains(rx, at("tools")));  // outside node_modules: the file's folder, as before
  EXPECT_FALSE(contains(rx, dir_.string()));
}

TEST(LaunchOptions, RoundTrip) {
  LaunchOptions o;
  o.parent = 42;
  o.jail = true;
  o.uid = 65534;
  o.read_exec = {"/srv/a b"};
  o.read_write = {"/srv/data"};
  o.hide = {"/srv/data/secret"};
  o.net = NetMode::kProxy;
  o.proxy_port = 8080;
  o.control_fd = 4;
  o.address_space = 1 << 30;
  o.memory = 1 << 29;
  o.nproc = 99;
  o.tmp_size = 1 << 20;
  o.cgroup_memory = "/sys/fs/cgroup/memory/x";
  auto args = o.to_args();
  std::vector<const char*> argv = {"hearth-launch"};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back("--");
  argv.push_back("/bin/true");
  argv.push_back("true");
  std::string error;
  auto parsed = parse_launch_args(static_cast<int>(argv.size()), argv.data(), error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->options.to_args(), args);
  EXPECT_EQ(std::string(argv[static_cast<std::size_t>(parsed->program_index)]), "/bin/true");
}

TEST(LaunchOptions, UnknownAndInvalidOptionsAreRefused) {
  std::string error;
  const char* unknown[] = {"hearth-launch", "--jail", "--fancy=1", "--", "/bin/true", "true"};
  EXPECT_FALSE(parse_launch_args(6, unknown, error));
  EXPECT_NE(error.find("--fancy"), std::string::npos);
  const char* relative[] = {"hearth-launch", "--rw=data", "--", "/bin/true", "true"};
  EXPECT_FALSE(parse_launch_args(5, relative, error));
  const char* net[] = {"hearth-launch", "--net=maybe", "--", "/bin/true", "true"};
  EXPECT_FALSE(parse_launch_args(5, net, error));
}

}  // namespace
}  // namespace hearth::jail
