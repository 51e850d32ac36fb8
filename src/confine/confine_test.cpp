#include "confine/confine.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>

#include "json/json.hpp"

namespace hearth::confine {
namespace {

jail::Capabilities everything() {
  jail::Capabilities caps;
  for (const char* name : {"user namespace", "pid namespace", "mount namespace", "ipc namespace",
                           "uts namespace", "network namespace", "landlock", "seccomp"}) {
    caps.mechanisms.push_back({name, true, ""});
  }
  return caps;
}

proc::Command true_command() {
  proc::Command cmd;
  cmd.program = "/bin/true";
  cmd.argv = {"true"};
  cmd.cwd = "/tmp";
  return cmd;
}

bool has_option(const proc::Command& cmd, std::string_view option) {
  return std::find(cmd.launcher_options.begin(), cmd.launcher_options.end(), option) !=
         cmd.launcher_options.end();
}

TEST(LooksOutOfMemory, RecognisesRuntimes) {
  EXPECT_TRUE(looks_out_of_memory("Traceback...\nMemoryError\n"));
  EXPECT_TRUE(looks_out_of_memory(
      "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"));
  EXPECT_TRUE(
      looks_out_of_memory("terminate called after throwing an instance of 'std::bad_alloc'"));
  EXPECT_TRUE(looks_out_of_memory("sort: Cannot allocate memory"));
  EXPECT_FALSE(looks_out_of_memory("Traceback...\nKeyError: 'x'\n"));
}

class ConfineTest : public ::testing::Test {
 protected:
  boost::asio::io_context ioc_;
  jail::Jail jail_{jail::JailOptions{}, everything()};
};

TEST_F(ConfineTest, AmendsTheCommandWithThePlan) {
  auto cmd = true_command();
  permissions::Permissions permissions;
  permissions.network_access = egress::NetworkPolicy::parse({"api.example.com"}).value();
  auto c = Confinement::start(jail_, permissions, "/tmp", {}, cmd, ioc_.get_executor(), "s.e");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c.value()->confined());
  EXPECT_GE(cmd.control_fd, 0);
  EXPECT_TRUE(has_option(cmd, "--jail"));
  EXPECT_TRUE(has_option(cmd, "--net=proxy"));
  EXPECT_TRUE(has_option(cmd, "--control-fd=4"));
  EXPECT_NE(std::find(cmd.env.begin(), cmd.env.end(), "HTTPS_PROXY=http://127.0.0.1:3128"),
            cmd.env.end());
}

// A host list that does not parse never reaches here: the manifest loader refuses it
// (manifest_test: MalformedHostListsAreLoadProblems). What the permissions hold is used as parsed.
TEST_F(ConfineTest, EmptyHostListReachesNothing) {
  auto cmd = true_command();
  permissions::Permissions permissions;
  permissions.network_access = egress::NetworkPolicy::parse({}).value();
  auto c = Confinement::start(jail_, permissions, "/tmp", {}, cmd, ioc_.get_executor(), "s.e");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(has_option(cmd, "--net=none"));
  EXPECT_FALSE(has_option(cmd, "--net=proxy"));
  EXPECT_EQ(std::find(cmd.env.begin(), cmd.env.end(), "HTTPS_PROXY=http://127.0.0.1:3128"),
            cmd.env.end());
}

TEST_F(ConfineTest, FailedRunUnderMaxMemoryIsMemoryLimitExceeded) {
  auto cmd = true_command();
  permissions::Permissions permissions;
  permissions.max_memory = 64 << 20;
  auto c = Confinement::start(jail_, permissions, "/tmp", {}, cmd, ioc_.get_executor(), "s.e");
  ASSERT_TRUE(c.ok());
  proc::RunResult r;
  r.status = proc::RunResult::Status::kExited;
  r.exit_code = 1;
  r.err_tail = "MemoryError\n";
  auto verdict = c.value()->finish(r);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->code, ErrorCode::kHandlerError);
  EXPECT_EQ(verdict->message, "memory limit exceeded");
  EXPECT_EQ(json::string_member(verdict->data, "reason"), "memory-limit");
}

TEST_F(ConfineTest, SuccessfulRunKeepsItsOwnOutcome) {
  auto cmd = true_command();
  permissions::Permissions permissions;
  permissions.max_memory = 64 << 20;
  auto c = Confinement::start(jail_, permissions, "/tmp", {}, cmd, ioc_.get_executor(), "s.e");
  ASSERT_TRUE(c.ok());
  proc::RunResult r;
  r.status = proc::RunResult::Status::kExited;
  r.exit_code = 0;
  r.err_tail = "MemoryError in a log line\n";
  EXPECT_FALSE(c.value()->finish(r).has_value());
}

TEST_F(ConfineTest, MissingMechanismRefusesBeforeAnythingRuns) {
  jail::Capabilities caps = everything();
  caps.mechanisms.pop_back();  // seccomp
  jail::Jail weak(jail::JailOptions{}, caps);
  auto cmd = true_command();
  auto c = Confinement::start(weak, {}, "/tmp", {}, cmd, ioc_.get_executor(), "s.e");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(c.error().message.find("seccomp"), std::string::npos);
  EXPECT_EQ(cmd.control_fd, -1);
}

}  // namespace
}  // namespace hearth::confine

namespace hearth::confine {
namespace {

TEST_F(ConfineTest, AWarmJailsFingerprintChangesWithTheFilesItWasPlannedFrom) {
  char pattern[] = "/tmp/hearth-confine-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  std::filesystem::create_directories(dir / "data" / "secret");
  std::ofstream(dir / "data" / "a.key") << "key";
  std::ofstream(dir / "data" / "secret" / "file.txt") << "secret";
  permissions::Permissions permissions;
  permissions.file_access = std::vector<std::string>{"./**", "!data/*.key", "!data/secret/**"};
  auto cmd = true_command();
  cmd.cwd = dir;
  ConfineExtras extras;
  extras.exec_on_request = true;
  auto made =
      Confinement::start(jail_, permissions, dir, {}, cmd, ioc_.get_executor(), "s.e", extras);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_TRUE(has_option(cmd, "--exec-on-request"));
  const std::string planned = made.value()->fingerprint();
  ASSERT_FALSE(planned.empty());
  auto now = [&] {
    auto fresh = true_command();
    fresh.cwd = dir;
    auto fingerprint = Confinement::plan_fingerprint(jail_, permissions, dir, {}, fresh);
    EXPECT_TRUE(fingerprint.ok());
    return fingerprint.ok() ? fingerprint.value() : std::string();
  };
  EXPECT_EQ(now(), planned);  // nothing changed: the warm jail may take the call
  // A hidden file renamed over (an atomic save): same name, another inode.
  std::ofstream(dir / "data" / "a.key.new") << "new key";
  std::filesystem::rename(dir / "data" / "a.key.new", dir / "data" / "a.key");
  const std::string replaced = now();
  EXPECT_NE(replaced, planned);
  // A new file a negation matches: another plan.
  std::ofstream(dir / "data" / "b.key") << "another";
  EXPECT_NE(now(), replaced);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::confine
