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
#include <functional>
#include <thread>
#include <vector>

#include "json/json.hpp"
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
  fs::path dir;
  /// `suffix` tells apart two folders of one test.
  explicit Tmp(const std::string& suffix = "")
      : dir(fs::temp_directory_path() /
            ("hearth-vault-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix)) {
    fs::create_directories(dir);
  }
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
  // An edited row changes the content the generation authenticates: the whole vault is
  // refused. Accepted on purpose (hearth vault accept-rollback), each value still authenticates
  // itself, so a moved or edited one is an error, never wrong data.
  const auto tampered = [&](std::string_view scope, std::string_view name) {
    auto refused = Vault::open(tmp.db(), key());
    EXPECT_FALSE(refused.ok());
    if (refused.ok()) return std::string();
    EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
    EXPECT_NE(refused.error().message.find("was tampered with: its content does not match"),
              std::string::npos)
        << refused.error().message;
    EXPECT_TRUE(Vault::accept_rollback(tmp.db(), key()).ok());
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

// --- rollback: the generation, its record, and the operator's acceptance ---------------------

/// The database file's bytes, taken with no connection open (so nothing waits in a WAL), and put
/// back the way a restored backup or a swapped file would be.
std::string snapshot(const fs::path& db) {
  std::ifstream in(db, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void restore(const fs::path& db, const std::string& bytes) {
  fs::remove(db.string() + "-wal");
  fs::remove(db.string() + "-shm");
  std::ofstream(db, std::ios::binary | std::ios::trunc) << bytes;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

std::string refusal(const fs::path& db, std::uint8_t fill = 7) {
  auto v = Vault::open(db, key(fill));
  EXPECT_FALSE(v.ok()) << "the vault opened";
  if (v.ok()) return "";
  EXPECT_EQ(v.error().code, ErrorCode::kPermissionDenied);
  return v.error().message;
}

TEST(VaultRollback, AnOlderCopyOfTheFileIsRefusedUntilAccepted) {
  Tmp tmp;
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "TOKEN", "old-token").ok()); }
  const auto old_copy = snapshot(tmp.db());
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v->set("a.example", "TOKEN", "rotated-token").ok());
    ASSERT_TRUE(v->revoke("a.example", {}).ok());  // nothing to revoke: no new generation
  }
  const auto new_copy = snapshot(tmp.db());
  restore(tmp.db(), old_copy);
  const auto message = refusal(tmp.db());
  // A new vault is generation 2 (its record made at 1 first), the first set 3, the second 4.
  EXPECT_NE(message.find("vault: " + tmp.db().string() +
                         " is older than the last one this key wrote (generation 3 < 4): it was "
                         "rolled back or replaced; restore the newest copy, or accept this one "
                         "on purpose with `hearth vault accept-rollback --state-dir " +
                         tmp.dir.string() + "`"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("old-token"), std::string::npos);
  // The daemon's vault, opened at first use, refuses every call the same way.
  auto lazy = Vault::open_on_first_use(tmp.db(), [] { return Result<MasterKey>(key()); });
  auto got = lazy->get("a.example", "TOKEN");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("generation 3 < 4"), std::string::npos);
  EXPECT_FALSE(lazy->set("a.example", "OTHER", "x").ok());
  EXPECT_FALSE(lazy->list().ok());
  // The newest copy back: all is well, nothing lost.
  restore(tmp.db(), new_copy);
  EXPECT_EQ(lazy->get("a.example", "TOKEN").value()->value, "rotated-token");
  lazy.reset();
  // The operator takes the old copy on purpose: it becomes the newest generation, and the copy
  // it replaced is now the older one.
  restore(tmp.db(), old_copy);
  auto accepted = Vault::accept_rollback(tmp.db(), key());
  ASSERT_TRUE(accepted.ok()) << accepted.error().message;
  EXPECT_NE(accepted->accepted.find("generation 3 < 4"), std::string::npos);
  EXPECT_EQ(accepted->file_generation, 3);
  EXPECT_EQ(accepted->recorded_generation, 4);
  EXPECT_EQ(accepted->generation, 5);
  EXPECT_EQ(open(tmp.db())->get("a.example", "TOKEN").value()->value, "old-token");
  restore(tmp.db(), new_copy);
  EXPECT_NE(refusal(tmp.db()).find("generation 4 < 5"), std::string::npos);
  // Accepting a vault that is current changes nothing.
  restore(tmp.db(), old_copy);
  ASSERT_TRUE(Vault::accept_rollback(tmp.db(), key()).ok());
  auto current = Vault::accept_rollback(tmp.db(), key());
  ASSERT_TRUE(current.ok());
  EXPECT_TRUE(current->accepted.empty());
  EXPECT_EQ(current->generation, 6);
  // Another key is never accepted.
  auto wrong = Vault::accept_rollback(tmp.db(), key(8));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("does not match"), std::string::npos);
}

TEST(VaultRollback, EveryKindOfWriteAdvancesTheGeneration) {
  Tmp tmp;
  auto v = open(tmp.db());
  ASSERT_TRUE(v->set("global", "EMAIL", "me@example.org").ok());
  const auto steps = std::vector<std::function<void()>>{
      [&] { ASSERT_TRUE(v->set("a.example", "X", "1").ok()); },
      [&] { ASSERT_TRUE(v->set_if_version("a.example", "X", "2", std::nullopt, 1).value()); },
      [&] { ASSERT_TRUE(v->trust("a.example", {"EMAIL"}).ok()); },
      [&] { ASSERT_TRUE(v->revoke("a.example", {"EMAIL"}).value()); },
      [&] { ASSERT_TRUE(v->remove("a.example", "X").value()); },
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    v.reset();
    const auto before = snapshot(tmp.db());
    v = open(tmp.db());
    steps[i]();
    v.reset();
    const auto after = snapshot(tmp.db());
    restore(tmp.db(), before);
    EXPECT_NE(refusal(tmp.db()).find("is older than the last one"), std::string::npos) << i;
    restore(tmp.db(), after);
    v = open(tmp.db());
    ASSERT_TRUE(v);
  }
}

TEST(VaultRollback, AKillBetweenTheDatabaseAndTheRecordIsAcceptedAndRepaired) {
  Tmp tmp;
  const auto record = Vault::generation_record(tmp.db(), key());
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "1").ok()); }
  const auto record_before = read_text(record);
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "2").ok()); }
  const auto record_after = read_text(record);
  ASSERT_NE(record_before, record_after);
  // The database committed, the record did not follow (the process was killed between the two
  // writes): the database is one generation ahead, which is accepted, and the record repaired.
  write_text(record, record_before);
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v);
    EXPECT_EQ(v->get("a.example", "A").value()->value, "2");
  }
  EXPECT_EQ(read_text(record), record_after);
  struct stat st {};
  ASSERT_EQ(::stat(record.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The same at the next write of a vault that stayed open.
  auto v = open(tmp.db());
  ASSERT_TRUE(v->set("a.example", "A", "3").ok());
  const auto record_3 = read_text(record);
  write_text(record, record_after);
  ASSERT_TRUE(v->set("a.example", "A", "4").ok());
  v.reset();
  EXPECT_TRUE(open(tmp.db()));
  EXPECT_NE(read_text(record), record_3);
  EXPECT_EQ(read_text(record).rfind("hearth-vault-generation-v1 6 ", 0), 0u);
  // A new vault's record is made (at 1) before its database, so a kill in between leaves a
  // record and no database: the next open makes the vault above the record, never refuses it.
  Tmp fresh("-fresh");
  write_text(Vault::generation_record(fresh.db(), key()), read_text(record));
  { ASSERT_TRUE(open(fresh.db())); }
  EXPECT_EQ(read_text(Vault::generation_record(fresh.db(), key()))
                .rfind("hearth-vault-generation-v1 7 ", 0),
            0u);
}

TEST(VaultRollback, ATamperedOrMissingRecordIsRefused) {
  Tmp tmp;
  const auto record = Vault::generation_record(tmp.db(), key());
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "1").ok()); }
  const auto good = read_text(record);
  ASSERT_EQ(good.rfind("hearth-vault-generation-v1 3 ", 0), 0u) << good;
  // The number moved (down, so that an old copy would pass; or up) with the MAC kept.
  for (const char* generation : {"1", "2", "9"}) {
    write_text(record, "hearth-vault-generation-v1 " + std::string(generation) +
                           good.substr(good.find(' ', 27)));
    EXPECT_NE(refusal(tmp.db()).find("vault: the generation record " + record.string() +
                                     " was tampered with (it does not verify under this key)"),
              std::string::npos)
        << generation;
  }
  // Garbage, a record of another key, a link.
  write_text(record, "not a record\n");
  EXPECT_NE(refusal(tmp.db()).find("was tampered with"), std::string::npos);
  {
    Tmp other("-other");
    { ASSERT_TRUE(open(other.db(), 9)->set("a.example", "A", "1").ok()); }
    write_text(record, read_text(Vault::generation_record(other.db(), key(9))));
    EXPECT_NE(refusal(tmp.db()).find("was tampered with"), std::string::npos);
  }
  fs::remove(record);
  fs::create_symlink(tmp.dir / "elsewhere", record);
  EXPECT_NE(refusal(tmp.db()).find("was tampered with"), std::string::npos);
  // Deleted: with a database that has a generation, that is how a rollback would hide.
  fs::remove(record);
  EXPECT_NE(refusal(tmp.db()).find("vault: the generation record " + record.string() +
                                   " is missing, but " + tmp.db().string() + " is at generation 3"),
            std::string::npos);
  // Restored, all is well.
  write_text(record, good);
  EXPECT_TRUE(open(tmp.db()));
}

TEST(VaultRollback, RowsMixedFromAnOlderCopyOrAddedAreRefused) {
  Tmp tmp;
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v->set("a.example", "TOKEN", "old").ok());
    ASSERT_TRUE(v->trust("a.example", {"EMAIL"}).ok());
  }
  const auto old_copy = snapshot(tmp.db());
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v->set("a.example", "TOKEN", "new").ok());
    ASSERT_TRUE(v->revoke("a.example", {}).ok());
  }
  // The old copy wearing the new copy's generation row.
  {
    auto current = storage::open_sqlite(tmp.db()).value();
    auto row = current->query("SELECT value FROM vault_meta WHERE key = 'generation'").value();
    current.reset();
    restore(tmp.db(), old_copy);
    auto db = storage::open_sqlite(tmp.db()).value();
    ASSERT_TRUE(
        db->execute("UPDATE vault_meta SET value = ? WHERE key = 'generation'", {row.front()[0]})
            .ok());
  }
  EXPECT_NE(refusal(tmp.db()).find("was tampered with: its content does not match"),
            std::string::npos);
  ASSERT_TRUE(Vault::accept_rollback(tmp.db(), key()).ok());
  // A trust grant added behind hearth's back, and a deleted generation row.
  {
    auto db = storage::open_sqlite(tmp.db()).value();
    ASSERT_TRUE(db->execute("INSERT INTO trust_grants (domain, name, granted_at) VALUES "
                            "('evil.example', '*', 0)")
                    .ok());
  }
  EXPECT_NE(refusal(tmp.db()).find("was tampered with"), std::string::npos);
  ASSERT_TRUE(Vault::accept_rollback(tmp.db(), key()).ok());
  {
    auto db = storage::open_sqlite(tmp.db()).value();
    ASSERT_TRUE(db->execute("DELETE FROM vault_meta WHERE key = 'generation'").ok());
  }
  EXPECT_NE(refusal(tmp.db()).find("a copy from before generations were kept"), std::string::npos);
}

TEST(VaultRollback, AChangeBehindAnOpenVaultIsRefusedAtItsNextCall) {
  Tmp tmp;
  auto v = open(tmp.db());
  ASSERT_TRUE(v->set("a.example", "A", "1").ok());
  // Another process writing through hearth is fine ...
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "B", "2").ok()); }
  EXPECT_EQ(v->get("a.example", "B").value()->value, "2");
  ASSERT_TRUE(v->set("a.example", "C", "3").ok());
  // ... a grant written into the file behind it is not.
  {
    auto db = storage::open_sqlite(tmp.db()).value();
    ASSERT_TRUE(db->execute("INSERT INTO trust_grants (domain, name, granted_at) VALUES "
                            "('evil.example', '*', 0)")
                    .ok());
  }
  auto trusted = v->is_trusted("evil.example", "EMAIL");
  ASSERT_FALSE(trusted.ok());
  EXPECT_NE(trusted.error().message.find("was tampered with"), std::string::npos);
  EXPECT_FALSE(v->set("a.example", "D", "4").ok());
}

TEST(VaultRollback, ANewVaultUnderTheSameKeyContinuesTheCount) {
  Tmp tmp;
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "1").ok()); }
  const auto old_copy = snapshot(tmp.db());
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "2").ok()); }
  // The database deleted (by the user starting over, or by anyone): a new, empty vault, whose
  // generation starts above the record's, so no copy of the old one passes.
  fs::remove(tmp.db());
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->list().value().empty());
  }
  restore(tmp.db(), old_copy);
  EXPECT_NE(refusal(tmp.db()).find("generation 3 < 5"), std::string::npos);
}

TEST(VaultRollback, AVaultFromBeforeGenerationsIsAdoptedOnce) {
  Tmp tmp;
  const auto record = Vault::generation_record(tmp.db(), key());
  { ASSERT_TRUE(open(tmp.db())->set("a.example", "A", "1").ok()); }
  // What an older hearth left: no generation row, no record.
  {
    auto db = storage::open_sqlite(tmp.db()).value();
    ASSERT_TRUE(db->execute("DELETE FROM vault_meta WHERE key = 'generation'").ok());
  }
  fs::remove(record);
  const auto before = snapshot(tmp.db());
  {
    auto v = open(tmp.db());
    ASSERT_TRUE(v);
    EXPECT_EQ(v->get("a.example", "A").value()->value, "1");
  }
  EXPECT_TRUE(fs::exists(record));
  // From then on, that copy is an older one.
  restore(tmp.db(), before);
  EXPECT_NE(refusal(tmp.db()).find("(generation 0 < 2, a copy from before generations were kept)"),
            std::string::npos);
}

TEST(VaultRollback, TheRecordIsNamedForTheKey) {
  Tmp tmp;
  const auto seven = Vault::generation_record(tmp.db(), key(7));
  const auto eight = Vault::generation_record(tmp.db(), key(8));
  EXPECT_NE(seven, eight);
  EXPECT_EQ(seven.parent_path(), tmp.dir);
  EXPECT_EQ(seven.filename().string().rfind("vault.db.generation.", 0), 0u);
  EXPECT_EQ(seven.filename().string().size(), std::string("vault.db.generation.").size() + 16);
  // A key given by the environment has the same record as the same key in a file.
  ::setenv("HEARTH_TEST_KEY", std::string(64, 'a').c_str(), 1);
  auto from_env = MasterKey::from_env("HEARTH_TEST_KEY").value();
  ::unsetenv("HEARTH_TEST_KEY");
  EXPECT_EQ(Vault::generation_record(tmp.db(), *from_env),
            Vault::generation_record(tmp.db(), key(0xaa)));
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
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(json::string_member(refused.error().data, "reason"), "not-trusted");
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
