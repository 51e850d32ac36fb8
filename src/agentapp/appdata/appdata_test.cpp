#include "agentapp/appdata/appdata.hpp"

#include <gtest/gtest.h>

#include "agentapp/package/test_package.hpp"

namespace hearth::agentapp {
namespace {

using testing::PackageDir;

json::object with_migrations(std::string_view folder) {
  return json::object{{"storage", json::object{{"migrations", folder}}}};
}

TEST(AppData, AppliesEachMigrationOnceInNameOrder) {
  PackageDir pkg("app");
  pkg.write("storage/migrations/002_index.sql", "CREATE INDEX notes_text ON notes (text);");
  pkg.write("storage/migrations/001_init.sql",
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);");
  pkg.write("storage/migrations/README.md", "not a migration");
  PackageDir data("data");
  auto db = AppData::open(data.path()).value();
  auto applied = db->migrate(pkg.path(), with_migrations("./storage/migrations"));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(json::serialize(applied.value()), R"(["001_init.sql","002_index.sql"])");
  EXPECT_TRUE(db->migrate(pkg.path(), with_migrations("storage/migrations")).value().empty());
  EXPECT_EQ(db->applied().value().size(), 2u);
  // A migration changed after it was applied is refused.
  pkg.write("storage/migrations/001_init.sql", "CREATE TABLE notes (id INTEGER PRIMARY KEY);");
  const auto changed = db->migrate(pkg.path(), with_migrations("storage/migrations"));
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.error().message.find("has changed"), std::string::npos);
}

TEST(AppData, FindsTheMigrationsWhereverTheManifestNamesThem) {
  PackageDir pkg("app");
  pkg.write("db/002.sql", "x");
  pkg.write("db/001.sql", "x");
  pkg.write("db/notes.txt", "x");
  const auto fm = json::parse(R"({"runtimePackage":{"storage":{"migrations":"./db"}}})");
  const auto files = migration_files(pkg.path(), fm.as_object());
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files.value().size(), 2u);
  EXPECT_EQ(files.value()[0].filename(), "001.sql");
  EXPECT_TRUE(migration_files(pkg.path(), {}).value().empty());
  EXPECT_FALSE(migration_files(pkg.path(), with_migrations("missing")).ok());
}

TEST(AppData, AMigrationThatFailsHalfwayLeavesNothingOfItself) {
  PackageDir pkg("app");
  pkg.write("m/001.sql", "CREATE TABLE a (x);");
  pkg.write("m/002.sql",
            "CREATE TABLE b (x); INSERT INTO b VALUES (1); INSERT INTO nowhere VALUES (2);");
  pkg.write("m/003.sql", "CREATE TABLE c (x);");
  PackageDir data("data");
  auto db = AppData::open(data.path()).value();
  const auto r = db->migrate(pkg.path(), with_migrations("m"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("migration 002.sql failed"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(db->query("SELECT * FROM a", {}).ok());
  EXPECT_FALSE(db->query("SELECT * FROM b", {}).ok());  // rolled back with its migration
  EXPECT_FALSE(db->query("SELECT * FROM c", {}).ok());  // never reached
  EXPECT_EQ(json::serialize(db->applied().value().at(0).at("name")), R"("001.sql")");
  EXPECT_EQ(db->applied().value().size(), 1u);
}

TEST(AppData, AMigrationCannotReachBeyondTheAppsTables) {
  PackageDir pkg("app");
  PackageDir data("data");
  auto db = AppData::open(data.path()).value();
  for (const std::string_view sql :
       {"ATTACH DATABASE '/tmp/other.db' AS o;", "DELETE FROM hearth_migrations;",
        "UPDATE hearth_kv SET value = 'x';", "PRAGMA writable_schema = 1;", "COMMIT;"}) {
    pkg.write("m/001.sql", sql);
    EXPECT_FALSE(db->migrate(pkg.path(), with_migrations("m")).ok()) << sql;
  }
  EXPECT_FALSE(db->migrate(pkg.path(), with_migrations("../outside")).ok());
  EXPECT_FALSE(db->migrate(pkg.path(), with_migrations("/etc")).ok());
}

TEST(AppData, StoresValuesAndRunsTheAppsQueries) {
  PackageDir data("data");
  auto db = AppData::open(data.path()).value();
  EXPECT_TRUE(db->get("missing").value().is_null());
  ASSERT_TRUE(db->put("settings", json::parse(R"({"theme":"dark","n":[1,2]})")).ok());
  EXPECT_EQ(json::serialize(db->get("settings").value()), R"({"theme":"dark","n":[1,2]})");
  ASSERT_TRUE(db->put("settings", "light").ok());
  EXPECT_EQ(db->get("settings").value(), "light");
  ASSERT_TRUE(db->query("CREATE TABLE t (a, b)", {}).ok());
  ASSERT_TRUE(db->query("INSERT INTO t VALUES (?, ?)", json::array{1, "two"}).ok());
  EXPECT_EQ(json::serialize(db->query("SELECT a, b FROM t", {}).value()), R"([[1,"two"]])");
  // hearth's key-value table is not the app's to query.
  EXPECT_FALSE(db->query("SELECT * FROM hearth_kv", {}).ok());
}

TEST(AppData, OneAppCannotReadAnothersStorage) {
  PackageDir a("a");
  PackageDir b("b");
  auto first = AppData::open(a.path()).value();
  auto second = AppData::open(b.path()).value();
  ASSERT_TRUE(second->put("secret", "b's").ok());
  const std::string attach = "ATTACH DATABASE '" + (b.path() / "app.db").string() + "' AS b";
  const auto r = first->query(attach, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
  EXPECT_FALSE(first->query("SELECT value FROM hearth_kv WHERE key = 'secret'", {}).ok());
}

TEST(AppData, AQuotaIsEnforced) {
  PackageDir data("data");
  auto db = AppData::open(data.path(), std::int64_t{128} * 1024).value();
  ASSERT_TRUE(db->query("CREATE TABLE t (v)", {}).ok());
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    auto r = db->query("INSERT INTO t VALUES (?)", json::array{std::string(8192, 'x')});
    if (!r.ok()) {
      refused = true;
      EXPECT_NE(r.error().message.find("quota"), std::string::npos) << r.error().message;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_FALSE(db->put("big", json::string(std::string(std::size_t{512} * 1024, 'y'))).ok());
}

TEST(AppData, AValuePastTheQuotaIsRefusedWithTheQuotaReason) {
  PackageDir data("data");
  auto db = AppData::open(data.path(), std::int64_t{128} * 1024).value();
  const auto big = db->put("big", json::string(std::string(std::size_t{512} * 1024, 'y')));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(storage::quota_full(big.error())) << json::serialize(big.error().data);
  EXPECT_NE(big.error().message.find("quota is full"), std::string::npos) << big.error().message;
  // What fits is still stored.
  ASSERT_TRUE(db->put("small", 1).ok());
  EXPECT_EQ(db->get("small").value(), 1);
}

TEST(AppData, ThePlacementIsTheManifestsAndEveryOtherThanServerPostgresqlIsTheLocalFile) {
  const auto placed = [](json::object storage) {
    return app_placement("notes", json::object{{"storage", std::move(storage)}}, "/s/data/notes");
  };
  auto local = app_placement("notes", json::object{}, "/s/data/notes");
  EXPECT_EQ(local.app, "notes");
  EXPECT_EQ(local.placement, "local-sqlite");
  EXPECT_EQ(local.sqlite_file, "/s/data/notes/app.db");
  EXPECT_EQ(local.sqlite.max_bytes, AppData::kDefaultQuota);
  for (const char* other :
       {"local-sqlite", "local-indexeddb", "host-managed", "server-managed", "external"}) {
    EXPECT_EQ(placed({{"placement", other}}).placement, "local-sqlite") << other;
  }
  auto server = placed({{"placement", "server-postgresql"}, {"isolation", "per-tenant-schema"}});
  EXPECT_EQ(server.placement, "server-postgresql");
  EXPECT_EQ(server.isolation, "per-tenant-schema");
  EXPECT_EQ(placed({{"placement", "server-postgresql"}}).isolation, "per-app-schema");
  // runtimePackage.storage, as the migrations are found.
  auto runtime = app_placement(
      "notes",
      json::object{{"runtimePackage",
                    json::object{{"storage", json::object{{"placement", "server-postgresql"},
                                                          {"isolation", "dedicated-database"}}}}}},
      "/d");
  EXPECT_EQ(runtime.placement, "server-postgresql");
  EXPECT_EQ(runtime.isolation, "dedicated-database");
}

TEST(AppData, OpenedThroughTheEngineALocalAppIsItsFileWithItsQuota) {
  PackageDir state("state");
  auto engine = storage::sqlite_engine();
  const auto placement = app_placement("notes", json::object{}, state.path() / "data" / "notes");
  auto db = AppData::open(*engine, placement);
  ASSERT_TRUE(db.ok()) << db.error().message;
  ASSERT_TRUE(db.value()->put("k", 1).ok());
  EXPECT_TRUE(std::filesystem::exists(state.path() / "data/notes/app.db"));
  // The quota holds as it does for AppData::open.
  auto small = placement;
  small.app = "small";
  small.sqlite_file = state.path() / "data/small/app.db";
  small.sqlite.max_bytes = std::int64_t{128} * 1024;
  auto tiny = AppData::open(*engine, small).value();
  EXPECT_TRUE(storage::quota_full(
      tiny->put("big", json::string(std::string(std::size_t{512} * 1024, 'y'))).error()));
  // server-postgresql is the PostgreSQL engine's only.
  auto server = placement;
  server.placement = "server-postgresql";
  EXPECT_FALSE(AppData::open(*engine, server).ok());
}

TEST(AppData, ExportsTheAppsOwnTablesAsJsonLinesButNotHearths) {
  PackageDir pkg("app");
  pkg.write("storage/migrations/001_init.sql",
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT, score REAL, raw BLOB);"
            "CREATE TABLE \"odd/name\" (x TEXT);"
            "INSERT INTO notes VALUES (1, 'a \"b\"', 2.5, x'00ff');"
            "INSERT INTO notes VALUES (2, NULL, NULL, NULL);");
  PackageDir data("data");
  auto db = AppData::open(data.path()).value();
  ASSERT_TRUE(db->migrate(pkg.path(), with_migrations("storage/migrations")).ok());
  ASSERT_TRUE(db->put("kept", 1).ok());
  auto files = db->export_tables("sqlite");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files.value().size(), 3u);
  EXPECT_EQ(files.value()[0].name, "tables.json");
  EXPECT_EQ(files.value()[0].bytes,
            R"([{"table":"notes","file":"notes.jsonl","columns":["id","text","score","raw"],)"
            R"("rows":2},{"table":"odd/name","file":"odd_name.jsonl","columns":["x"],"rows":0}])"
            "\n");
  EXPECT_EQ(files.value()[1].name, "notes.jsonl");
  EXPECT_EQ(files.value()[1].bytes,
            R"({"id":1,"text":"a \"b\"","score":2.5,"raw":{"base64":"AP8="}})"
            "\n"
            R"({"id":2,"text":null,"score":null,"raw":null})"
            "\n");
  EXPECT_EQ(files.value()[2].name, "odd_name.jsonl");
  EXPECT_EQ(files.value()[2].bytes, "");
}

}  // namespace
}  // namespace hearth::agentapp
