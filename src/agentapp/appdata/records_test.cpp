#include "agentapp/records/records.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

Provenance provenance() {
  return {"notes", "1.2.0", "sha256:" + std::string(64, 'a'), "sha256:" + std::string(64, 'b')};
}

/// Changes the database behind hearth's back, as someone with the file could.
void raw_sql(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST(Evidence, ChainsEachEntryToTheOneBeforeWithItsProvenance) {
  PackageDir data("data");
  auto app = AppData::open(data.path()).value();
  EvidenceLog log(app->database(), provenance());
  const auto first = log.append("capability.invoked", json::object{{"capability", "lime.storage"}});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first.value().at("prev"), json::value(std::string(64, '0')));
  const auto second = log.append("capability.denied", json::object{{"reason", "not granted"}});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value().at("prev"), first.value().at("hash"));
  EXPECT_EQ(second.value().at("seq"), 2);
  EXPECT_EQ(second.value().at("provenance").at("packageHash"),
            json::value(provenance().package_hash));
  EXPECT_TRUE(log.verify().ok());
  EXPECT_EQ(log.entries(1).value().size(), 1u);
  // The app's own SQL cannot change it, nor can hearth's: the table refuses updates.
  EXPECT_FALSE(app->query("DELETE FROM hearth_evidence", {}).ok());
  EXPECT_FALSE(app->database().execute("UPDATE hearth_evidence SET kind = 'x'", {}).ok());
}

TEST(Evidence, AnEntryChangedBehindHearthsBackIsFound) {
  PackageDir data("data");
  {
    auto app = AppData::open(data.path()).value();
    EvidenceLog log(app->database(), provenance());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log.append("step", json::object{{"i", i}}).ok());
  }
  raw_sql(data.path() / "app.db",
          "DROP TRIGGER hearth_evidence_no_update; "
          "UPDATE hearth_evidence SET detail = '{\"i\":99}' WHERE seq = 2;");
  auto app = AppData::open(data.path()).value();
  EvidenceLog log(app->database(), provenance());
  const auto r = log.verify();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("entry 2 was changed"), std::string::npos) << r.error().message;
}

TEST(Evidence, ADeletedEntryIsFound) {
  PackageDir data("data");
  {
    auto app = AppData::open(data.path()).value();
    EvidenceLog log(app->database(), provenance());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(log.append("step", json::object{{"i", i}}).ok());
  }
  raw_sql(data.path() / "app.db",
          "DROP TRIGGER hearth_evidence_no_delete; DELETE FROM hearth_evidence WHERE seq = 2;");
  auto app = AppData::open(data.path()).value();
  EXPECT_FALSE(EvidenceLog(app->database(), provenance()).verify().ok());
}

TEST(Artifacts, AreContentAddressedCheckedAgainstTheirSchemaAndRecorded) {
  PackageDir data("data");
  auto app = AppData::open(data.path()).value();
  EvidenceLog log(app->database(), provenance());
  ArtifactStore artifacts(app->database(), data.path() / "artifacts", provenance(), log);
  Problems problems;
  const auto schema = schema::make_draft7_compiler()->compile(
      json::parse(
          R"({"type":"object","required":["count"],"properties":{"count":{"type":"integer"}}})"),
      {}, problems);
  ASSERT_TRUE(schema);
  const auto made = artifacts.create("notes-summary", "application/json", R"({"count":3})",
                                     json::object{{"title", "Summary"}}, schema.get());
  ASSERT_TRUE(made.ok()) << made.error().message;
  const auto& record = made.value();
  EXPECT_EQ(record.at("provenance").at("appName"), "notes");
  const std::string sha(record.at("sha256").as_string());
  EXPECT_TRUE(std::filesystem::exists(data.path() / "artifacts" / sha.substr(7)));

  const auto bad = artifacts.create("notes-summary", "application/json", R"({"count":"three"})", {},
                                    schema.get());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("count"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(
      artifacts.create("notes-summary", "application/json", "not json", {}, schema.get()).ok());

  const auto read = artifacts.read(std::string(record.at("id").as_string()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value().at("content"), R"({"count":3})");
  EXPECT_EQ(artifacts.list().value().size(), 1u);
  const auto entries = log.entries().value();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("kind"), "artifact.created");
  EXPECT_EQ(entries[0].at("detail").at("sha256"), record.at("sha256"));

  // A blob changed on disk is found when read.
  std::filesystem::permissions(data.path() / "artifacts" / sha.substr(7),
                               std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(data.path() / "artifacts" / sha.substr(7)) << R"({"count":4})";
  EXPECT_FALSE(artifacts.read(std::string(record.at("id").as_string())).ok());
}

}  // namespace
}  // namespace hearth::agentapp
