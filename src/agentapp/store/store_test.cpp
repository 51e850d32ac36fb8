#include "agentapp/store/store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>

#include "agentapp/store/staging.hpp"
#include "agentapp/store/test_apps.hpp"
#include "agentapp/store/test_archive.hpp"

namespace hearth::agentapp {
namespace {

namespace fs = std::filesystem;
using testing::PackageDir;

struct StoreTest : ::testing::Test {
  PackageDir state{"state"};
  PackageDir package{"notes"};
  std::unique_ptr<AppStore> store;
  KeyPair key = generate_key().value();

  void SetUp() override {
    testing::write_notes_app(package);
    auto opened = AppStore::open(state.path(), storage::sqlite_engine());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(opened.value());
    ReadinessContext context;
    context.provided = {"lime.storage", "lime.ui", "lime.artifacts"};
    context.secret_present = [this](std::string_view, std::string_view key) {
      return secrets_set && key == "token";
    };
    store->set_readiness_context(context);
  }
  bool secrets_set = true;
  void trust_and_sign() {
    ASSERT_TRUE(store->trust().add_key("example-org", key.public_pem).ok());
    ASSERT_TRUE(sign_package(package.path(), key.private_pem, "example-org").ok());
  }
  std::size_t entries_in(const fs::path& dir) {
    std::error_code ec;
    std::size_t n = 0;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  }
};

TEST_F(StoreTest, AnUnsignedPackageNeedsDevAndLeavesNothingBehindWhenRefused) {
  auto r = store->install(package.path(), false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--dev"), std::string::npos);
  EXPECT_EQ(entries_in(state.path() / "apps/packages"), 0u);
  EXPECT_EQ(entries_in(state.path() / "apps/staging"), 0u);
  EXPECT_TRUE(store->list().value().empty());

  r = store->install(package.path(), true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& app = r.value().app;
  EXPECT_EQ(app.trust, "unsigned");
  EXPECT_TRUE(app.dev());
  EXPECT_FALSE(app.enabled);
  EXPECT_EQ(r.value().review.at("warnings").as_array().size(), 1u);
  EXPECT_EQ(entries_in(state.path() / "apps/staging"), 0u);
}

TEST_F(StoreTest, ASignedPackageInstallsDisabledWithItsReview) {
  trust_and_sign();
  auto r = store->install(package.path(), false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& app = r.value().app;
  EXPECT_EQ(app.name, "notes");
  EXPECT_EQ(app.version, "1.2.0");
  EXPECT_EQ(app.trust, "signed");
  EXPECT_EQ(app.publisher, "example-org");
  EXPECT_EQ(app.key, key.fingerprint);
  EXPECT_FALSE(app.enabled);
  const auto& review = r.value().review;
  EXPECT_EQ(json::serialize(review.at("entries")),
            R"([{"key":"notes","kind":"page","title":"Notes","route":"/notes"}])");
  EXPECT_EQ(json::serialize(review.at("capabilities")), R"(["lime.storage","lime.ui"])");
  EXPECT_EQ(json::serialize(review.at("networkHosts")), R"(["api.example.org"])");
  EXPECT_EQ(review.at("backends").at(0).at("command"), "services/backend.py");
  EXPECT_EQ(review.at("storage").at("placement"), "local-sqlite");
  EXPECT_EQ(review.at("secrets").at(0).at("key"), "token");
  EXPECT_TRUE(review.at("warnings").as_array().empty());

  // The installed copy is read-only and is the package as signed.
  struct stat st {};
  ASSERT_EQ(::stat((app.dir / "services/backend.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0222, 0u);
  EXPECT_TRUE(fs::exists(app.dir / "app.signature.yaml"));

  // Installing the same name again is refused.
  auto again = store->install(package.path(), false);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already installed"), std::string::npos);
}

TEST_F(StoreTest, ATamperedPackageNeverInstallsEvenWithDev) {
  trust_and_sign();
  package.write("services/backend.py", "import os; os.system('curl evil')\n");
  auto r = store->install(package.path(), true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not the ones signed"), std::string::npos);
  EXPECT_TRUE(store->list().value().empty());
}

TEST_F(StoreTest, InstallsFromAnArchiveAndRefusesATraversingOne) {
  trust_and_sign();
  PackageDir work("work");
  {
    testing::TarGz tar(work.path() / "notes.tar.gz");
    for (auto it = fs::recursive_directory_iterator(package.path());
         it != fs::recursive_directory_iterator(); ++it) {
      if (!it->is_regular_file()) continue;
      std::ifstream in(it->path(), std::ios::binary);
      tar.file("notes/" + it->path().lexically_relative(package.path()).string(),
               std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    }
  }
  auto r = store->install(work.path() / "notes.tar.gz", false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().app.trust, "signed");

  {
    testing::TarGz tar(work.path() / "evil.tar.gz");
    tar.file("APP.md", testing::notes_app_md()).file("../../escaped", "x");
  }
  auto evil = store->install(work.path() / "evil.tar.gz", true);
  ASSERT_FALSE(evil.ok());
  EXPECT_FALSE(fs::exists(state.path() / "apps/escaped"));
  EXPECT_EQ(entries_in(state.path() / "apps/staging"), 0u);
}

TEST_F(StoreTest, EnableDisableAndShowWithTheLog) {
  trust_and_sign();
  ASSERT_TRUE(store->install(package.path(), false).ok());
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  EXPECT_TRUE(store->find("notes").value().enabled);
  ASSERT_TRUE(store->set_enabled("notes", false).ok());
  EXPECT_FALSE(store->find("notes").value().enabled);
  EXPECT_FALSE(store->set_enabled("nothing", true).ok());
  const auto shown = store->show("notes");
  ASSERT_TRUE(shown.ok()) << shown.error().message;
  std::vector<std::string> actions;
  for (const auto& e : shown.value().at("log").as_array()) {
    actions.emplace_back(e.at("action").as_string());
  }
  // Enabling grants what the review listed (two capabilities), then enables.
  EXPECT_EQ(actions, (std::vector<std::string>{"install", "grant", "grant", "enable", "disable"}));
  EXPECT_EQ(shown.value().at("review").at("trust"), "signed");
}

TEST_F(StoreTest, EnablingAppliesTheMigrationsAndAFailingOneKeepsTheAppDisabled) {
  trust_and_sign();
  ASSERT_TRUE(store->install(package.path(), false).ok());
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  const auto shown = store->show("notes").value();
  EXPECT_EQ(shown.at("migrations").at(0).at("name"), "001_init.sql");
  EXPECT_EQ(shown.at("log").as_array().back().at("action"), "enable");
  EXPECT_EQ(shown.at("log").as_array().back().at("detail").at("migrationsApplied").at(0),
            "001_init.sql");
  ASSERT_TRUE(store->uninstall("notes", DataPolicy::kDelete).ok());

  // A second migration that fails halfway: the first applies, the app stays disabled.
  package.write("storage/migrations/002_broken.sql",
                "CREATE TABLE tags (t TEXT); INSERT INTO missing VALUES (1);");
  ASSERT_TRUE(sign_package(package.path(), key.private_pem, "example-org").ok());
  ASSERT_TRUE(store->install(package.path(), false).ok());
  const auto r = store->set_enabled("notes", true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("002_broken.sql"), std::string::npos);
  EXPECT_FALSE(store->find("notes").value().enabled);
  const auto after = store->show("notes").value();
  EXPECT_EQ(after.at("migrations").as_array().size(), 1u);
  EXPECT_EQ(after.at("log").as_array().back().at("action"), "enable-failed");
}

TEST_F(StoreTest, GrantsAreDenyFirstPerWorkspaceAndLogged) {
  trust_and_sign();
  ASSERT_TRUE(store->install(package.path(), false).ok());
  EXPECT_EQ(store->decision("notes", "lime.storage", "w1").value(), "none");
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  EXPECT_EQ(store->decision("notes", "lime.storage", "w1").value(), "allow");
  EXPECT_EQ(store->decision("notes", "lime.agent", "w1").value(), "none");  // not declared
  // A deny for one workspace beats the allow for every workspace, there only.
  ASSERT_TRUE(store->grant("notes", "lime.storage", "w1", false, "person").ok());
  EXPECT_EQ(store->decision("notes", "lime.storage", "w1").value(), "deny");
  EXPECT_EQ(store->decision("notes", "lime.storage", "w2").value(), "allow");
  // A deny for every workspace beats an allow for one.
  ASSERT_TRUE(store->grant("notes", "lime.ui", "w2", true, "person").ok());
  ASSERT_TRUE(store->grant("notes", "lime.ui", "", false, "person").ok());
  EXPECT_EQ(store->decision("notes", "lime.ui", "w2").value(), "deny");
  const auto grants = store->grants("notes").value();
  EXPECT_EQ(grants.size(), 4u);
  EXPECT_EQ(store->show("notes").value().at("log").as_array().back().at("action"), "deny");
  EXPECT_FALSE(store->grant("nothing", "lime.ui", "", true, "person").ok());
}

TEST_F(StoreTest, UpgradeWaitsForApprovalOfWhatIsNewAndRollsBack) {
  trust_and_sign();
  ASSERT_TRUE(store->install(package.path(), false).ok());
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  const auto old_dir = store->find("notes").value().dir;

  // 1.3.0 adds a capability, a network host and a migration.
  std::string md = testing::notes_app_md();
  const auto replace = [&md](std::string_view from, std::string_view to) {
    md.replace(md.find(from), from.size(), to);
  };
  replace("version: 1.2.0", "version: 1.3.0");
  replace("    lime.ui: ^1.0\n", "    lime.artifacts: ^1.0\n    lime.ui: ^1.0\n");
  replace("domains: [api.example.org]", "domains: [api.example.org, cdn.example.org]");
  package.write("APP.md", md);
  package.write("storage/migrations/002_tags.sql", "CREATE TABLE tags (t TEXT);\n");
  ASSERT_TRUE(sign_package(package.path(), key.private_pem, "example-org").ok());

  auto waiting = store->upgrade(package.path(), false, false);
  ASSERT_TRUE(waiting.ok()) << waiting.error().message;
  EXPECT_TRUE(waiting.value().needs_approval);
  EXPECT_FALSE(waiting.value().upgraded);
  EXPECT_EQ(json::serialize(waiting.value().added.at("capabilities")), R"(["lime.artifacts"])");
  EXPECT_EQ(json::serialize(waiting.value().added.at("networkHosts")), R"(["cdn.example.org"])");
  EXPECT_EQ(json::serialize(waiting.value().added.at("migrations")), R"(["002_tags.sql"])");
  EXPECT_EQ(waiting.value().added.at("permissions").as_array().size(), 1u);
  EXPECT_EQ(store->find("notes").value().version, "1.2.0");

  auto done = store->upgrade(package.path(), false, true);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(done.value().upgraded);
  EXPECT_EQ(json::serialize(done.value().migrations_applied), R"(["002_tags.sql"])");
  EXPECT_EQ(store->find("notes").value().version, "1.3.0");
  EXPECT_EQ(store->decision("notes", "lime.artifacts", "w").value(), "allow");
  EXPECT_TRUE(fs::exists(old_dir));  // kept for a rollback

  auto back = store->rollback("notes");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().version, "1.2.0");
  EXPECT_EQ(store->find("notes").value().dir, old_dir);
  EXPECT_EQ(store->rollback("notes").value().version, "1.3.0");  // and forward again

  ASSERT_TRUE(store->uninstall("notes", DataPolicy::kDelete).ok());
  EXPECT_FALSE(fs::exists(state.path() / "apps/packages/notes"));
}

TEST_F(StoreTest, TheReviewShowsTheBackendsArgsAndTheOperationsAndAnUpgradeThatLoosensOneWaits) {
  std::string md = testing::notes_app_md();
  md.replace(md.find("    command: services/backend.py\n"), 33,
             "    command: python3\n    args: [./services/backend.py]\n");
  package.write("APP.md", md);
  package.write("app.operations.yaml",
                "operations:\n  - key: add_note\n    type: storage-write\n"
                "    sideEffect: app_storage_write\n    approvalRequired: true\n");
  auto installed = store->install(package.path(), true);
  ASSERT_TRUE(installed.ok()) << installed.error().message;
  const auto& review = installed.value().review;
  EXPECT_EQ(review.at("backends").at(0).at("args"), json::parse(R"(["./services/backend.py"])"));
  EXPECT_EQ(review.at("operations"), json::parse(R"([{"key":"add_note","type":"storage-write",
                "sideEffect":"app_storage_write","approvalRequired":true}])"));

  // The next version lets the tool run on its own: approved again.
  md.replace(md.find("version: 1.2.0"), 14, "version: 1.3.0");
  package.write("APP.md", md);
  package.write("app.operations.yaml",
                "operations:\n  - key: add_note\n    type: storage-write\n"
                "    sideEffect: app_storage_write\n    autoExecute: true\n");
  auto waiting = store->upgrade(package.path(), true, false);
  ASSERT_TRUE(waiting.ok()) << waiting.error().message;
  EXPECT_TRUE(waiting.value().needs_approval);
  ASSERT_EQ(waiting.value().added.at("operations").as_array().size(), 1u);
  EXPECT_NE(json::serialize(waiting.value().added.at("operations")).find("autoExecute"),
            std::string::npos);
}

TEST_F(StoreTest, AnUpgradeWhoseMigrationFailsLeavesTheOldVersion) {
  trust_and_sign();
  ASSERT_TRUE(store->install(package.path(), false).ok());
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  std::string md = testing::notes_app_md();
  md.replace(md.find("version: 1.2.0"), 14, "version: 2.0.0");
  package.write("APP.md", md);
  package.write("storage/migrations/002_bad.sql",
                "CREATE TABLE x (a); INSERT INTO nowhere VALUES (1);");
  ASSERT_TRUE(sign_package(package.path(), key.private_pem, "example-org").ok());
  const auto r = store->upgrade(package.path(), false, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("1.2.0 stays installed"), std::string::npos);
  EXPECT_EQ(store->find("notes").value().version, "1.2.0");
  EXPECT_TRUE(store->find("notes").value().enabled);
  EXPECT_FALSE(store->rollback("notes").ok());  // nothing to return to
  // A version whose only change is its UI adds nothing to approve.
  fs::remove(package.path() / "storage/migrations/002_bad.sql");
  package.write("dist/ui/index.html", "<h1>Notes 2</h1>");
  ASSERT_TRUE(sign_package(package.path(), key.private_pem, "example-org").ok());
  auto plain = store->upgrade(package.path(), false, false);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain.value().needs_approval);
  EXPECT_TRUE(plain.value().upgraded);
  EXPECT_EQ(store->find("notes").value().version, "2.0.0");
}

TEST_F(StoreTest, ReadinessGatesEnablingAndNamesWhatToDo) {
  trust_and_sign();
  auto installed = store->install(package.path(), false);
  ASSERT_TRUE(installed.ok());
  // The backend cannot run yet: ready without it.
  EXPECT_EQ(installed.value().review.at("readiness").at("status"), "ready-degraded");
  secrets_set = false;
  auto ready = store->readiness("notes").value();
  EXPECT_EQ(ready.at("status"), "needs-setup");
  EXPECT_EQ(ready.at("setupActions").at(0).at("kind"), "configure-secret");
  EXPECT_EQ(ready.at("setupActions").at(0).at("target"), "hearth vault set app.notes token");
  EXPECT_EQ(secret_variable("sync-token"), "sync_token");
  EXPECT_EQ(secret_variable("2fa.code"), "_2fa_code");
  auto refused = store->set_enabled("notes", true);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("hearth vault set app.notes token"), std::string::npos);
  EXPECT_FALSE(store->find("notes").value().enabled);
  EXPECT_EQ(store->show("notes").value().at("log").as_array().back().at("action"),
            "enable-refused");
  secrets_set = true;
  // A capability the app requires that the host does not provide blocks it.
  ReadinessContext none;
  none.secret_present = [](std::string_view, std::string_view) { return true; };
  store->set_readiness_context(none);
  EXPECT_EQ(store->readiness("notes").value().at("status"), "blocked");
  EXPECT_FALSE(store->set_enabled("notes", true).ok());
}

TEST_F(StoreTest, UninstallKeepsDeletesOrExportsTheDataAndRecordsIt) {
  trust_and_sign();
  const auto data = state.path() / "apps/data/notes";
  const auto install_with_data = [&] {
    ASSERT_TRUE(store->install(package.path(), false).ok());
    fs::create_directories(data);
    std::ofstream(data / "notes.db") << "rows";
  };

  install_with_data();
  auto r = store->uninstall("notes", DataPolicy::kKeep);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(fs::exists(data / "notes.db"));
  EXPECT_TRUE(store->list().value().empty());
  EXPECT_TRUE(fs::exists(r.value().at("record").as_string().c_str()));
  EXPECT_EQ(entries_in(state.path() / "apps/packages"), 0u);

  fs::remove_all(data);
  install_with_data();
  r = store->uninstall("notes", DataPolicy::kDelete);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(fs::exists(data));
  EXPECT_EQ(r.value().at("data"), "deleted");

  install_with_data();
  const auto export_to = state.path() / "notes-export.tar.gz";
  r = store->uninstall("notes", DataPolicy::kExportThenDelete, export_to);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(fs::exists(data));
  PackageDir back("back");
  const auto extracted = stage_archive(export_to, back.path() / "x");
  ASSERT_TRUE(extracted.ok());
  std::ifstream in(extracted.value() / "notes.db");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "rows");
  EXPECT_EQ(entries_in(state.path() / "apps/cleanup"), 3u);
  // An export never overwrites a file, and leaves no partial file behind.
  install_with_data();
  const auto before = entries_in(state.path());
  EXPECT_FALSE(store->uninstall("notes", DataPolicy::kExportThenDelete, export_to).ok());
  EXPECT_EQ(entries_in(state.path()), before);
  EXPECT_TRUE(fs::exists(data / "notes.db"));
  ASSERT_TRUE(store->uninstall("notes", DataPolicy::kDelete).ok());
  EXPECT_FALSE(store->uninstall("notes", DataPolicy::kKeep).ok());
}

TEST_F(StoreTest, StagingLeftByAKilledInstallGoesAtOpenAndAtTheNextInstallButAHeldOneStays) {
  const auto staging = state.path() / "apps/staging";
  // As a killed install leaves it: the lock file (its lock gone with the process) and a partial
  // copy; and a folder left by a hearth before the lock files.
  state.write("apps/staging/0000dead.lock", "");
  state.write("apps/staging/0000dead/package/big.bin", std::string(std::size_t{1} << 20, 'x'));
  state.write("apps/staging/1111dead/package/APP.md", "x");
  ASSERT_TRUE(AppStore::open(state.path(), storage::sqlite_engine()).ok());
  EXPECT_EQ(entries_in(staging), 0u);

  // An install running in another process holds its entry's lock: installs here sweep what is
  // stale but leave that one.
  auto held = StagingEntry::create(staging);
  ASSERT_TRUE(held.ok()) << held.error().message;
  state.write("apps/staging/2222dead/package/APP.md", "x");
  ASSERT_TRUE(store->install(package.path(), true).ok());
  EXPECT_FALSE(fs::exists(staging / "2222dead"));
  EXPECT_TRUE(fs::is_directory(held.value().path()));
  EXPECT_EQ(entries_in(staging), 2u);  // the held folder and its lock file
  // One refused (already installed) after a leftover appeared: swept all the same.
  state.write("apps/staging/3333dead/package/APP.md", "x");
  ASSERT_FALSE(store->install(package.path(), true).ok());
  EXPECT_EQ(entries_in(staging), 2u);
}

/// The first line of `problems` in an error's data.
std::string first_problem(const Error& error) {
  const auto* data = error.data.if_object();
  const auto* list = data != nullptr ? data->if_contains("problems") : nullptr;
  if (list == nullptr || !list->is_array() || list->as_array().empty()) return "";
  return std::string(list->as_array().front().as_string());
}

TEST_F(StoreTest, EnablingRefusesAnInstalledFileChangedAddedRemovedOrLinkedAndNamesIt) {
  const auto app = store->install(package.path(), true).value().app;
  const std::string backend = "print('ready')\n";
  const std::string page = "<h1>Notes</h1>\n";
  PackageDir outside("outside");
  outside.write("backend.py", backend);
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[&] { testing::change_installed(app.dir, "services/backend.py", "import os\n"); },
       "services/backend.py changed since install"},
      {[&] { testing::change_installed(app.dir, "services/extra.py", "import os\n"); },
       "services/extra.py was added since install (a file)"},
      {[&] { fs::remove(app.dir / "dist/ui/index.html"); },
       "dist/ui/index.html was removed since install"},
      // The same bytes through a link: the package hash, which follows links, would not see it.
      {[&] {
         fs::remove(app.dir / "services/backend.py");
         fs::create_symlink(outside.path() / "backend.py", app.dir / "services/backend.py");
       },
       "services/backend.py is a symbolic link now (a file at install)"},
  };
  for (const auto& [change, expected] : cases) {
    SCOPED_TRACE(expected);
    testing::change_installed(app.dir, "APP.md", testing::notes_app_md());
    change();
    auto refused = store->set_enabled("notes", true);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
    EXPECT_NE(refused.error().message.find(expected), std::string::npos) << refused.error().message;
    EXPECT_EQ(first_problem(refused.error()), expected);
    EXPECT_FALSE(store->find("notes").value().enabled);
    // show says why, in its integrity and its readiness.
    const auto shown = store->show("notes").value();
    EXPECT_EQ(shown.at("integrity").at("ok"), false);
    EXPECT_EQ(shown.at("integrity").at("problems").at(0).as_string(), expected);
    EXPECT_EQ(shown.at("readiness").at("status"), "blocked");
    EXPECT_EQ(shown.at("log").as_array().back().at("action"), "enable-refused");
    EXPECT_EQ(shown.at("log").as_array().back().at("detail").at("integrity").at(0).as_string(),
              expected);
    // Put back as installed, it can be enabled again.
    fs::remove(app.dir / "services/backend.py");
    fs::remove(app.dir / "services/extra.py");
    testing::change_installed(app.dir, "services/backend.py", backend);
    testing::change_installed(app.dir, "dist/ui/index.html", page);
    ASSERT_TRUE(store->set_enabled("notes", true).ok());
    EXPECT_EQ(store->show("notes").value().at("integrity").at("ok"), true);
    ASSERT_TRUE(store->set_enabled("notes", false).ok());
  }
}

TEST_F(StoreTest, TheDaemonsCheckDisablesAnEnabledAppWhoseFilesChangedAndLogsIt) {
  const auto app = store->install(package.path(), true).value().app;
  ASSERT_TRUE(store->set_enabled("notes", true).ok());
  auto intact = store->verify_enabled("daemon start");
  ASSERT_TRUE(intact.ok());
  EXPECT_TRUE(intact.value().empty());
  EXPECT_TRUE(store->find("notes").value().enabled);

  testing::change_installed(app.dir, "services/backend.py", "import socket\n");
  auto failed = store->verify_enabled("daemon start");
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed.value().size(), 1u);
  EXPECT_EQ(first_problem(failed.value()[0]), "services/backend.py changed since install");
  EXPECT_FALSE(store->find("notes").value().enabled);
  const auto log = store->show("notes").value().at("log").as_array();
  const auto& last = log.back();
  EXPECT_EQ(last.at("action"), "integrity-failed");
  EXPECT_EQ(last.at("detail").at("when"), "daemon start");
  EXPECT_EQ(last.at("detail").at("disabled"), true);
  EXPECT_EQ(last.at("detail").at("problems").at(0), "services/backend.py changed since install");
  // Disabled: the next start has nothing to check.
  EXPECT_TRUE(store->verify_enabled("daemon start").value().empty());
}

TEST_F(StoreTest, APackageInstalledBeforeFileListsIsCheckedByItsPackageHash) {
  const auto app = store->install(package.path(), true).value().app;
  auto db = storage::open_sqlite(state.path() / "apps/apps.db").value();
  const auto forget = [&db] { ASSERT_TRUE(db->execute("DELETE FROM package_files").ok()); };
  forget();
  // Intact: its list is recorded from now on.
  EXPECT_TRUE(store->integrity_problems(app).value().empty());
  EXPECT_EQ(db->query("SELECT dir FROM package_files").value().size(), 1u);
  forget();
  testing::change_installed(app.dir, "services/backend.py", "import os\n");
  auto problems = store->integrity_problems(app).value();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("package hash"), std::string::npos) << problems[0];
  EXPECT_TRUE(db->query("SELECT dir FROM package_files").value().empty());
  // Uninstalling forgets the lists of every version.
  testing::change_installed(app.dir, "services/backend.py", "print('ready')\n");
  EXPECT_TRUE(store->integrity_problems(app).value().empty());
  ASSERT_TRUE(store->uninstall("notes", DataPolicy::kDelete).ok());
  EXPECT_TRUE(db->query("SELECT dir FROM package_files").value().empty());
}

}  // namespace
}  // namespace hearth::agentapp

namespace hearth::agentapp {
namespace {

/// The readiness of `front matter` (YAML lines) against a host providing lime.storage 1.0.0.
json::object readiness_of(const std::string& yaml) {
  PackageDir dir("compat");
  dir.write("APP.md",
            "---\nname: compat\ndescription: d\nversion: 1.0.0\nstatus: ready\n"
            "appType: agent-app\n" +
                yaml + "---\n");
  auto manifest = read_manifest(dir.path());
  EXPECT_TRUE(manifest.ok()) << manifest.error().message;
  ReadinessContext context;
  context.provided = {"lime.storage"};
  context.versions = {{"lime.storage", "1.0.0"}, {"appRuntime", "0.10.0"}, {"sdk", "1.0.0"}};
  return assess_readiness(manifest.value(), dir.path(), context);
}

std::string messages(const json::object& r) {
  std::string out;
  for (const auto& c : r.at("checks").as_array()) {
    out += std::string(c.at("message").as_string()) + "\n";
  }
  return out;
}

TEST(Compatibility, VersionRangesAreCheckedAgainstWhatHearthImplements) {
  auto fits = readiness_of(
      "requires:\n  lime:\n    appRuntime: '>=0.9'\n  sdk: ^1.0\n  capabilities:\n"
      "    lime.storage: ^1.0\n");
  EXPECT_EQ(fits.at("status"), "ready") << messages(fits);

  auto newer = readiness_of("requires:\n  capabilities:\n    lime.storage: ^2.0\n");
  EXPECT_EQ(newer.at("status"), "blocked");
  EXPECT_NE(messages(newer).find("hearth implements lime.storage 1.0.0, the app needs ^2.0"),
            std::string::npos)
      << messages(newer);

  EXPECT_EQ(readiness_of("requires:\n  sdk: '>=2'\n").at("status"), "blocked");
  EXPECT_EQ(readiness_of("requires:\n  lime:\n    appRuntime: ^1.0\n").at("status"), "blocked");
  auto unreadable = readiness_of("requires:\n  capabilities:\n    lime.storage: latest\n");
  EXPECT_EQ(unreadable.at("status"), "blocked");
  EXPECT_NE(messages(unreadable).find("cannot read the version range 'latest'"), std::string::npos);
  // A name hearth does not know degrades, and says so.
  auto unknown = readiness_of("requires:\n  lime:\n    cloudSync: ^1.0\n");
  EXPECT_EQ(unknown.at("status"), "ready-degraded");
}

}  // namespace
}  // namespace hearth::agentapp
