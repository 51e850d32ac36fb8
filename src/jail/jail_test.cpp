#include "jail/jail.hpp"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>

#include "jail/control.hpp"
#include "jail/sandbox.hpp"

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
                           "uts namespace", "network namespace", "landlock", "seccomp"}) {
    caps.mechanisms.push_back({name, true, ""});
  }
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
  EXPECT_TRUE(contains(rules.hide, at("data/secret.json")));
  EXPECT_TRUE(contains(rules.hide, at("data/keys/k1.pem")));
  EXPECT_FALSE(contains(rules.hide, at("data/a.json")));
  // data/ and data/keys/ hold covered entries: kept (no remove, rename or refer), not granted
  // whole.
  EXPECT_EQ(rules.keep, (std::vector<std::string>{at("data"), at("data/keys")}));
  EXPECT_TRUE(rules.read_write.empty());
}

// The folder a `X/**` negation starts from matches it too (`**` is zero or more segments): it
// is covered itself, so that it is a mount point in the jail and cannot be renamed.
TEST_F(TempService, StarStarNegationCoversItsFolder) {
  touch("data/secret/file");
  touch("data/secret/sub/deep");
  touch("data/pub/x");
  touch("data/a.txt");
  touch("other/y");
  touch("top.txt");
  const auto rules = file_rules(dir_, {"./**", "!data/secret/**"});
  EXPECT_EQ(rules.hide, std::vector<std::string>{at("data/secret")});
  // Every folder from the service folder down to the covered one is kept ...
  EXPECT_EQ(rules.keep, (std::vector<std::string>{dir_.string(), at("data")}));
  // ... and their other sub-folders are granted whole, each with a rule of its own.
  EXPECT_TRUE(contains(rules.read_write, at("data/pub")));
  EXPECT_TRUE(contains(rules.read_write, at("other")));
  EXPECT_EQ(rules.read_write.size(), 2u);
  // Files need no rule of their own: the kept folder's rule reads and writes them.
  EXPECT_FALSE(contains(rules.read_write, at("top.txt")));
  EXPECT_FALSE(contains(rules.read_write, at("data/a.txt")));
  EXPECT_FALSE(contains(rules.read_write, dir_.string()));
  EXPECT_FALSE(contains(rules.read_write, at("data")));
}

TEST_F(TempService, LiteralNegationOfAFolderKeepsItsAncestors) {
  touch("data/secret/file");
  touch("data/pub/x");
  const auto rules = file_rules(dir_, {"data/**", "!data/secret"});
  EXPECT_EQ(rules.hide, std::vector<std::string>{at("data/secret")});
  EXPECT_EQ(rules.keep, std::vector<std::string>{at("data")});  // the service folder: no rule
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data/pub")});
}

TEST_F(TempService, NegatedFilesKeepTheirFolderOnly) {
  touch("data/a.key");
  touch("data/notes.txt");
  touch("data/sub/b.key");  // `*` stays within data/
  touch("data/sub/c.txt");
  const auto rules = file_rules(dir_, {"data/**", "!data/*.key"});
  EXPECT_EQ(rules.hide, std::vector<std::string>{at("data/a.key")});
  EXPECT_EQ(rules.keep, std::vector<std::string>{at("data")});
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data/sub")});
}

TEST_F(TempService, NegationAnywhereKeepsEveryFolderAboveAMatch) {
  touch("data/x/secret/f");
  touch("data/x/pub/f");
  touch("data/y/f");
  touch("code/secret");  // outside every grant: covered, nothing kept for it
  const auto rules = file_rules(dir_, {"data/**", "!**/secret"});
  EXPECT_TRUE(contains(rules.hide, at("data/x/secret")));
  EXPECT_TRUE(contains(rules.hide, at("code/secret")));
  EXPECT_EQ(rules.keep, (std::vector<std::string>{at("data"), at("data/x")}));
  EXPECT_TRUE(contains(rules.read_write, at("data/x/pub")));
  EXPECT_TRUE(contains(rules.read_write, at("data/y")));
  EXPECT_EQ(rules.read_write.size(), 2u);
}

TEST_F(TempService, NestedGrantsAreKeptToo) {
  // A narrower pattern must not grant back, whole, a folder that a wider one keeps.
  touch("data/secret/f");
  touch("data/pub/f");
  const auto rules = file_rules(dir_, {"./**", "data/**", "data/pub/**", "!data/secret/**"});
  EXPECT_EQ(rules.keep, (std::vector<std::string>{dir_.string(), at("data")}));
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data/pub")});
}

TEST_F(TempService, NegationOfAMissingFolderKeepsNothing) {
  // Nothing to protect yet: what the handler creates there later is its own.
  touch("data/a.txt");
  const auto rules = file_rules(dir_, {"data/**", "!data/secret/**", "!data/secret"});
  EXPECT_TRUE(rules.hide.empty());
  EXPECT_TRUE(rules.keep.empty());
  EXPECT_EQ(rules.read_write, std::vector<std::string>{at("data")});
}

TEST_F(TempService, LinksInAKeptFolderGetNoRule) {
  touch("data/secret/f");
  fs::create_directory_symlink("/etc", dir_ / "data" / "etc-link");
  const auto rules = file_rules(dir_, {"data/**", "!data/secret"});
  EXPECT_TRUE(rules.read_write.empty());  // not /etc, not the link
}

TEST_F(TempService, TooManyEntriesInKeptFoldersRefuse) {
  touch("data/secret.key");
  for (std::size_t i = 0; i <= kMaxHideScan; ++i) {
    fs::create_directory(dir_ / "data" / std::to_string(i));
  }
  const auto rules = file_rules(dir_, {"data/**", "!data/secret.key"});
  ASSERT_EQ(rules.hide.size(), 1u);
  EXPECT_TRUE(rules.hide.front().empty());  // the refusal marker plan() turns into -32001
}

TEST_F(TempService, PlanPassesKeptFoldersToTheLauncher) {
  touch("data/secret/f");
  touch("data/pub/f");
  Jail jail({}, all_mechanisms());
  Request request;
  request.service_dir = dir_;
  request.program = "/bin/true";
  request.file_access = std::vector<std::string>{"data/**", "!data/secret/**"};
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  const auto& o = plan.value().options;
  EXPECT_EQ(o.read_write_keep, std::vector<std::string>{at("data")});
  EXPECT_EQ(o.read_write, std::vector<std::string>{at("data/pub")});
  EXPECT_EQ(o.hide, std::vector<std::string>{at("data/secret")});
  const auto args = o.to_args();
  EXPECT_TRUE(contains(args, "--rw-keep=" + at("data")));
}

/// Runs `body` in a forked child (the mechanisms restrict the calling process for good); true
/// when it returned 0. Its messages go to stderr.
template <class Body>
int in_child(Body&& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define CHILD_EXPECT(cond)                                                              \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s (errno %d)\n", __FILE__, __LINE__, #cond, errno); \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

// The rights of a kept folder, enforced by the kernel: files in it are created, written,
// replaced by rename (atomic saves), removed and moved; folders in it are never removed or
// renamed, so no folder above an excluded (covered) entry can be moved from over it. Excluded
// entries themselves are mount points in the jail, which no rename or link moves.
TEST_F(TempService, KeptFolderRightsRefuseRemovingOrRenamingFolders) {
  if (sandbox::landlock_abi() < 2) GTEST_SKIP() << "Landlock with REFER (ABI 2) is not available";
  touch("data/a.txt");
  touch("data/sub/inner/x");
  touch("data/pub/p.txt");
  LaunchOptions o;
  o.read_write_keep = {at("data"), at("data/sub")};
  o.read_write = {at("data/pub")};
  const std::string d = at("data");
  const int rc = in_child([&]() -> int {
    if (auto f = sandbox::apply_landlock(o, sandbox::landlock_abi(), "")) {
      std::fprintf(stderr, "landlock: %s\n", f->detail.c_str());
      return 2;
    }
    // Allowed: files in the kept folder, everything in the granted one.
    CHILD_EXPECT(std::ofstream(d + "/new.txt") << "n");
    CHILD_EXPECT(std::ofstream(d + "/a.txt", std::ios::app) << "more");
    CHILD_EXPECT(std::ofstream(d + "/.a.txt.tmp") << "replacement");
    CHILD_EXPECT(::rename((d + "/.a.txt.tmp").c_str(), (d + "/a.txt").c_str()) == 0);
    CHILD_EXPECT(::unlink((d + "/new.txt").c_str()) == 0);
    CHILD_EXPECT(::mkdir((d + "/newdir").c_str(), 0755) == 0);
    CHILD_EXPECT(std::ofstream(d + "/pub/q.txt") << "q");
    CHILD_EXPECT(::rename((d + "/pub/q.txt").c_str(), (d + "/pub/r.txt").c_str()) == 0);
    CHILD_EXPECT(::unlink((d + "/pub/r.txt").c_str()) == 0);
    // Refused: removing or renaming a folder directly in a kept folder.
    CHILD_EXPECT(::rename((d + "/sub").c_str(), (d + "/sub2").c_str()) != 0);
    CHILD_EXPECT(::rename((d + "/sub/inner").c_str(), (d + "/inner").c_str()) != 0);
    CHILD_EXPECT(::rename((d + "/sub").c_str(), (d + "/pub/sub").c_str()) != 0);
    CHILD_EXPECT(::rmdir((d + "/newdir").c_str()) != 0);
    CHILD_EXPECT(::rename((d + "/pub").c_str(), (d + "/pub2").c_str()) != 0);
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(fs::exists(dir_ / "data" / "sub" / "inner" / "x"));
  EXPECT_TRUE(fs::exists(dir_ / "data" / "newdir"));
  EXPECT_TRUE(fs::exists(dir_ / "data" / "pub"));
}

// Unix sockets in the seccomp filter, in every network mode: no socket(AF_UNIX) (whatever the
// upper bits of the family register), socketpair only for connected stream/seqpacket pairs.
TEST(Seccomp, UnixSocketsAreRefusedButStreamPairsWork) {
  for (NetMode mode : {NetMode::kNone, NetMode::kProxy, NetMode::kHost}) {
    const std::string bpf = sandbox::export_seccomp(mode);
    ASSERT_FALSE(bpf.empty());
    const int rc = in_child([&]() -> int {
      if (auto f = sandbox::apply_seccomp(mode, bpf)) {
        std::fprintf(stderr, "seccomp: %s\n", f->detail.c_str());
        return 2;
      }
      int sv[2];
      CHILD_EXPECT(::socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
      CHILD_EXPECT(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0) < 0);
      CHILD_EXPECT(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0) < 0);
      CHILD_EXPECT(::syscall(SYS_socket, (1ULL << 32) | AF_UNIX, SOCK_STREAM, 0) < 0);
      CHILD_EXPECT(::socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0 && errno == EPERM);
      CHILD_EXPECT(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0);
      CHILD_EXPECT(::socketpair(AF_UNIX, SOCK_RAW, 0, sv) < 0);  // AF_UNIX makes it SOCK_DGRAM
      CHILD_EXPECT(::syscall(SYS_socketpair, AF_UNIX, (1ULL << 32) | SOCK_DGRAM, 0, sv) < 0);
      CHILD_EXPECT(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
      CHILD_EXPECT(::write(sv[0], "x", 1) == 1);
      char c = 0;
      CHILD_EXPECT(::read(sv[1], &c, 1) == 1 && c == 'x');
      // Raw closes: the socketpair(2) calls themselves are under test, in a forked child.
      ::close(sv[0]);
      ::close(sv[1]);
      CHILD_EXPECT(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) == 0);
      ::close(sv[0]);  // raw, as above
      ::close(sv[1]);  // raw, as above
      return 0;
    });
    EXPECT_EQ(rc, 0) << "mode " << to_string(mode);
  }
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
  request.network_access = egress::NetworkPolicy(true);
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
  request.network_access = egress::NetworkPolicy::parse({"api.example.com"}).value();
  request.max_memory = 64 << 20;
  auto plan = jail.plan(request);
  ASSERT_TRUE(plan.ok());
  const auto& o = plan.value().options;
  EXPECT_TRUE(o.jail);
  EXPECT_EQ(o.net, NetMode::kProxy);
  EXPECT_EQ(plan.value().proxy_allow.entries(), std::vector<std::string>{"api.example.com"});
  EXPECT_TRUE(plan.value().proxy_allow.allows("api.example.com", 443));
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
  o.read_write_keep = {"/srv", "/srv/x"};
  o.hide = {"/srv/data/secret"};
  o.net = NetMode::kProxy;
  o.proxy_port = 8080;
  o.control_fd = 4;
  o.exec_on_request = true;
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
  // A warm jail waits for its call on the control socket: without one (or without a jail) it
  // could never start the program.
  const char* no_control[] = {"hearth-launch", "--jail", "--exec-on-request", "--",
                              "/bin/true",     "true"};
  EXPECT_FALSE(parse_launch_args(6, no_control, error));
  EXPECT_NE(error.find("--exec-on-request"), std::string::npos);
  const char* no_jail[] = {
      "hearth-launch", "--control-fd=4", "--exec-on-request", "--", "/bin/true", "true"};
  EXPECT_FALSE(parse_launch_args(6, no_jail, error));
}

TEST(ExecMessage, ArgumentsAndEnvironmentRoundTrip) {
  const std::vector<std::string> argv = {"python3", "", "a b\tc", "{{x}}", "\xc3\xa9"};
  const std::vector<std::string> env = {"PATH=/usr/bin", "EMPTY=", "LAVS_INPUT={\"a\":1}"};
  std::vector<std::string> argv_out = {"stale"};
  std::vector<std::string> env_out = {"stale"};
  ASSERT_TRUE(decode_exec(encode_exec(argv, env), argv_out, env_out));
  EXPECT_EQ(argv_out, argv);
  EXPECT_EQ(env_out, env);
  ASSERT_TRUE(decode_exec(encode_exec({"true"}, {}), argv_out, env_out));
  EXPECT_EQ(argv_out, std::vector<std::string>{"true"});
  EXPECT_TRUE(env_out.empty());
}

TEST(ExecMessage, MalformedMessagesAreRefused) {
  std::vector<std::string> argv, env;
  using namespace std::string_literals;
  EXPECT_FALSE(decode_exec("", argv, env));
  EXPECT_FALSE(decode_exec("1\0true"s, argv, env));    // not NUL-ended
  EXPECT_FALSE(decode_exec("0\0"s, argv, env));        // no argv[0]
  EXPECT_FALSE(decode_exec("3\0a\0b\0"s, argv, env));  // fewer entries than counted
  EXPECT_FALSE(decode_exec("x\0a\0"s, argv, env));     // no count
  EXPECT_FALSE(decode_exec("-1\0a\0"s, argv, env));
  EXPECT_FALSE(decode_exec("99999999\0a\0"s, argv, env));  // absurd count
}

}  // namespace
}  // namespace hearth::jail
