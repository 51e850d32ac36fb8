#include "agentapp/store/store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

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
    auto opened = AppStore::open(state.path());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(opened.value());
  }
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
  EXPECT_EQ(actions, (std::vector<std::string>{"install", "enable", "disable"}));
  EXPECT_EQ(shown.value().at("review").at("trust"), "signed");
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
  EXPECT_FALSE(store->uninstall("notes", DataPolicy::kKeep).ok());
}

}  // namespace
}  // namespace hearth::agentapp
