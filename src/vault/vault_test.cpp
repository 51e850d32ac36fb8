#include "vault/vault.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "storage/storage.hpp"

extern char** environ;

namespace hearth::vault {
namespace {

namespace fs = std::filesystem;

MasterKey key(std::uint8_t fill = 7) {
  std::array<std::uint8_t, MasterKey::kSize> bytes{};
  bytes.fill(fill);
  return MasterKey::from_bytes(bytes);
}

struct Tmp {
  fs::path dir =
      fs::temp_directory_path() / ("hearth-vault-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
  fs::path db() const { return dir / "vault.db"; }
};

std::unique_ptr<Vault> open(const fs::path& db, std::uint8_t fill = 7) {
  auto v = Vault::open(db, key(fill));
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? std::move(v).value() : nullptr;
}

TEST(Vault, RoundTripScopesAndNames) {
  Tmp tmp;
  auto v = open(tmp.db());
  ASSERT_TRUE(v->set("API.Example.com", "API_KEY", "s3cret").ok());
  auto got = v->get("api.example.com", "API_KEY");
  ASSERT_TRUE(got.ok() && got.value());
  EXPECT_EQ(got.value()->value, "s3cret");
  EXPECT_EQ(got.value()->version, 1);
  ASSERT_TRUE(v->set("api.example.com", "API_KEY", "rotated").ok());
  EXPECT_EQ(v->get("api.example.com", "API_KEY").value()->version, 2);
  EXPECT_FALSE(v->get("other.example.com", "API_KEY").value());
  EXPECT_FALSE(v->set("https://x", "A", "v").ok());
  EXPECT_FALSE(v->set("api.example.com", "1BAD", "v").ok());
  EXPECT_FALSE(v->set("api.example.com", "A-B", "v").ok());
  // list: names and metadata, never values.
  auto entries = v->list(std::nullopt);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->at(0).scope, "api.example.com");
  EXPECT_EQ(entries->at(0).size, 7u);
  EXPECT_TRUE(v->remove("api.example.com", "API_KEY").value());
  EXPECT_FALSE(v->remove("api.example.com", "API_KEY").value());
}

TEST(Vault, NothingReadableOnDisk) {
  Tmp tmp;
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v->set("api.example.com", "TOKEN", "plain-text-marker-123").ok());
  }
  std::ifstream in(tmp.db(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ifstream wal(tmp.dir / "vault.db-wal", std::ios::binary);
  bytes += std::string((std::istreambuf_iterator<char>(wal)), {});
  EXPECT_EQ(bytes.find("plain-text-marker"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(tmp.db().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(Vault, WrongMasterKeyIsNamed) {
  Tmp tmp;
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "X", "v").ok()); }
  auto wrong = Vault::open(tmp.db(), key(8));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("master key does not match"), std::string::npos);
}

TEST(Vault, OpenedOnFirstUseOnly) {
  Tmp tmp;
  int asked = 0;
  bool key_readable = false;
  auto lazy = Vault::open_on_first_use(tmp.db(), [&]() -> Result<MasterKey> {
    ++asked;
    if (!key_readable) return Error::make(ErrorCode::kInternalError, "the key file is unreadable");
    return key(7);
  });
  // Made, and nothing read or written yet: no key asked for, no database file.
  EXPECT_EQ(asked, 0);
  EXPECT_FALSE(fs::exists(tmp.db()));
  // A failure to open is each call's own error, and the next call tries again.
  auto failed = lazy->get("api.example.com", "API_KEY");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("unreadable"), std::string::npos);
  EXPECT_FALSE(lazy->set("api.example.com", "API_KEY", "v").ok());
  EXPECT_EQ(asked, 2);
  key_readable = true;
  ASSERT_TRUE(lazy->set("api.example.com", "API_KEY", "s3cret").ok());
  EXPECT_EQ(lazy->get("api.example.com", "API_KEY").value()->value, "s3cret");
  EXPECT_TRUE(lazy->trust("api.example.com", {"TOKEN"}).ok());
  EXPECT_EQ(asked, 3);  // once open, the key is not asked for again
  lazy.reset();
  // The same file under the same key, opened at once: the value is there.
  EXPECT_EQ(open(tmp.db())->get("api.example.com", "API_KEY").value()->value, "s3cret");
  // Under another key the first use fails with the mismatch named, never with wrong data.
  auto wrong = Vault::open_on_first_use(tmp.db(), [] { return Result<MasterKey>(key(9)); });
  auto got = wrong->get("api.example.com", "API_KEY");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(got.error().message.find("does not match"), std::string::npos);
  EXPECT_FALSE(wrong->list().ok());
}

TEST(Vault, FirstUseFromSeveralThreadsOpensOnce) {
  Tmp tmp;
  std::atomic<int> asked{0};
  auto lazy = Vault::open_on_first_use(tmp.db(), [&]() -> Result<MasterKey> {
    ++asked;
    return key(7);
  });
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  threads.reserve(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      if (lazy->set("t.example", "V" + std::to_string(i), "x").ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(asked.load(), 1);
  EXPECT_EQ(lazy->list().value().size(), 4u);
}

TEST(Vault, TamperingIsAnErrorNeverWrongData) {
  Tmp tmp;
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v->set("a.example", "ONE", "first-value").ok());
    ASSERT_TRUE(v->set("a.example", "TWO", "second-value").ok());
    ASSERT_TRUE(v->set("b.example", "ONE", "third-value").ok());
  }
  auto db = storage::open_sqlite(tmp.db()).value();
  const auto tampered = [&](std::string_view scope, std::string_view name) {
    auto v = open(tmp.db());
    auto got = v->get(scope, name);
    EXPECT_FALSE(got.ok());
    if (got.ok()) return std::string();
    EXPECT_EQ(got.error().code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(got.error().message.find("value"), std::string::npos);
    return got.error().message;
  };
  // Another row's sealed value moved onto this name.
  ASSERT_TRUE(db->execute("UPDATE variables SET sealed = (SELECT sealed FROM variables WHERE "
                          "scope = 'a.example' AND name = 'ONE'), version = 1 WHERE scope = "
                          "'a.example' AND name = 'TWO'")
                  .ok());
  EXPECT_EQ(tampered("a.example", "TWO"),
            "vault: a.example::TWO was tampered with (authentication failed)");
  // ... onto another domain.
  ASSERT_TRUE(db->execute("UPDATE variables SET sealed = (SELECT sealed FROM variables WHERE "
                          "scope = 'a.example' AND name = 'ONE') WHERE scope = 'b.example'")
                  .ok());
  EXPECT_NE(tampered("b.example", "ONE").find("tampered"), std::string::npos);
  // A flipped byte, and an edited version.
  ASSERT_TRUE(db->execute("UPDATE variables SET version = version + 1 WHERE scope = 'a.example' "
                          "AND name = 'ONE'")
                  .ok());
  EXPECT_NE(tampered("a.example", "ONE").find("tampered"), std::string::npos);
  ASSERT_TRUE(db->execute("UPDATE variables SET version = 1, sealed = X'00' WHERE scope = "
                          "'a.example' AND name = 'ONE'")
                  .ok());
  EXPECT_NE(tampered("a.example", "ONE").find("tampered"), std::string::npos);
}

TEST(Vault, ExpiryAndVersionedWrites) {
  Tmp tmp;
  auto v = open(tmp.db());
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  ASSERT_TRUE(v->set("a.example", "OLD", "x", now - 1).ok());
  ASSERT_TRUE(v->set("a.example", "NEW", "y", now + 100).ok());
  EXPECT_FALSE(v->get("a.example", "OLD").value());
  EXPECT_EQ(v->get("a.example", "NEW").value()->expires_at, now + 100);
  EXPECT_EQ(v->list(std::string_view("a.example"))->size(), 1u);
  // A rotated refresh token is written only over the version it replaces.
  EXPECT_TRUE(v->set_if_version("a.example", "RT", "r1", std::nullopt, 0).value());
  EXPECT_FALSE(v->set_if_version("a.example", "RT", "r2", std::nullopt, 0).value());
  EXPECT_TRUE(v->set_if_version("a.example", "RT", "r2", std::nullopt, 1).value());
  EXPECT_EQ(v->get("a.example", "RT").value()->value, "r2");
}

TEST(Vault, GlobalsNeedATrustGrantAndEveryReadIsObserved) {
  Tmp tmp;
  auto v = open(tmp.db());
  std::vector<GlobalRead> reads;
  v->set_read_observer([&](const GlobalRead& r) { reads.push_back(r); });
  ASSERT_TRUE(v->set("global", "USER_EMAIL", "me@example.org").ok());
  auto refused = v->get_global_for("api.example.com", "USER_EMAIL");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "vault: api.example.com is not trusted with global::USER_EMAIL (hearth vault trust "
            "api.example.com USER_EMAIL)");
  ASSERT_TRUE(v->trust("api.example.com", {"USER_EMAIL"}).ok());
  EXPECT_EQ(v->get_global_for("api.example.com", "USER_EMAIL").value()->value, "me@example.org");
  EXPECT_FALSE(v->get_global_for("other.example", "USER_EMAIL").ok());
  ASSERT_TRUE(v->trust("other.example", {}).ok());  // every global variable
  EXPECT_TRUE(v->get_global_for("other.example", "USER_EMAIL").ok());
  EXPECT_EQ(v->grants(std::nullopt)->size(), 2u);
  EXPECT_TRUE(v->revoke("api.example.com", {}).value());
  EXPECT_FALSE(v->revoke("api.example.com", {}).value());
  EXPECT_FALSE(v->get_global_for("api.example.com", "USER_EMAIL").ok());
  ASSERT_EQ(reads.size(), 5u);
  EXPECT_FALSE(reads[0].granted);
  EXPECT_TRUE(reads[1].granted);
  EXPECT_EQ(reads[1].domain, "api.example.com");
  EXPECT_EQ(reads[1].name, "USER_EMAIL");
  EXPECT_FALSE(reads[4].granted);
  EXPECT_FALSE(v->trust("global", {}).ok());
}

TEST(MasterKey, FileIsCreatedPrivateAndCheckedWhenRead) {
  Tmp tmp;
  const auto file = tmp.dir / "vault.key";
  ASSERT_TRUE(MasterKey::load_or_create(file).ok());
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The same key next time: a vault made with it opens.
  {
    auto v = Vault::open(tmp.db(), MasterKey::load_or_create(file).value());
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE(v.value()->set("a.example", "X", "v").ok());
  }
  ASSERT_TRUE(Vault::open(tmp.db(), MasterKey::load_or_create(file).value()).ok());
  ::chmod(file.c_str(), 0644);
  auto exposed = MasterKey::load_or_create(file);
  ASSERT_FALSE(exposed.ok());
  EXPECT_NE(exposed.error().message.find("may be read by others"), std::string::npos);
  ::chmod(file.c_str(), 0600);
  std::ofstream(file) << "not a key";
  EXPECT_FALSE(MasterKey::load_or_create(file).ok());
}

TEST(MasterKey, FromTheEnvironment) {
  ::setenv("HEARTH_TEST_KEY", std::string(64, 'a').c_str(), 1);
  auto k = MasterKey::from_env("HEARTH_TEST_KEY");
  ASSERT_TRUE(k.ok() && k.value());
  EXPECT_EQ(k.value()->data()[0], 0xaa);
  ::setenv("HEARTH_TEST_KEY", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqo=", 1);
  ASSERT_TRUE(MasterKey::from_env("HEARTH_TEST_KEY").value());
  ::setenv("HEARTH_TEST_KEY", "short", 1);
  EXPECT_FALSE(MasterKey::from_env("HEARTH_TEST_KEY").ok());
  ::unsetenv("HEARTH_TEST_KEY");
  EXPECT_FALSE(MasterKey::from_env("HEARTH_TEST_KEY").value());
}

// Run by KillNineLosesNothingAcknowledged in a child process: writes until killed, printing
// each index once `set` has returned.
TEST(VaultDurability, Writer) {
  const char* db = std::getenv("HEARTH_VAULT_WRITER_DB");
  if (db == nullptr) GTEST_SKIP() << "the child of KillNineLosesNothingAcknowledged";
  auto v = Vault::open(db, key()).value();
  for (int i = 0;; ++i) {
    if (!v->set("durable.example", "V" + std::to_string(i), "value-" + std::to_string(i)).ok()) {
      std::_Exit(3);
    }
    std::printf("%d\n", i);
    std::fflush(stdout);
  }
}

TEST(VaultDurability, KillNineLosesNothingAcknowledged) {
  if (std::getenv("HEARTH_VAULT_WRITER_DB") != nullptr) GTEST_SKIP();
  Tmp tmp;
  { ASSERT_TRUE(open(tmp.db())); }  // created (and migrated) before the writer starts
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const std::string filter = "--gtest_filter=VaultDurability.Writer";
  const std::string env_db = "HEARTH_VAULT_WRITER_DB=" + tmp.db().string();
  std::vector<char*> argv = {const_cast<char*>("/proc/self/exe"), const_cast<char*>(filter.c_str()),
                             nullptr};
  std::vector<char*> envp = {const_cast<char*>(env_db.c_str()), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string acked;
  char buf[4096];
  int lines = 0;
  while (lines < 300) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    acked.append(buf, static_cast<std::size_t>(n));
    lines = static_cast<int>(std::count(acked.begin(), acked.end(), '\n'));
  }
  ::kill(pid, SIGKILL);
  // What was printed before the kill was acknowledged: read it all.
  ssize_t n = 0;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) acked.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto v = open(tmp.db());
  int checked = 0;
  std::size_t start = 0;
  while (true) {
    const auto nl = acked.find('\n', start);
    if (nl == std::string::npos) break;
    const std::string index = acked.substr(start, nl - start);
    start = nl + 1;
    if (index.find_first_not_of("0123456789") != std::string::npos) continue;  // gtest's lines
    auto got = v->get("durable.example", "V" + index);
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_TRUE(got.value()) << "acknowledged write " << index << " was lost";
    EXPECT_EQ(got.value()->value, "value-" + index);
    ++checked;
  }
  EXPECT_GE(checked, 250);  // 300 lines were read, a few of them gtest's own
}

}  // namespace
}  // namespace hearth::vault
