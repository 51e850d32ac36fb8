// The store on the storage engine: where an app's tables go (its placement), what uninstall
// drops, and packages shared by daemons on one database (a wrapper of the SQLite engine that
// says it is shared, two state dirs on one apps database).
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>

#include "agentapp/appdata/appdata.hpp"
#include "agentapp/store/staging.hpp"
#include "agentapp/store/store.hpp"
#include "agentapp/store/test_apps.hpp"

namespace hearth::agentapp {
namespace {

namespace fs = std::filesystem;
using testing::PackageDir;

/// The notices between the test engines: one engine's notice reaches the others' handlers.
struct BusHub {
  struct Subscription {
    int owner;
    std::uint64_t id;
    std::string topic;
    storage::Bus::Handler handler;
  };
  std::mutex mutex;
  std::vector<Subscription> subscriptions;
  std::vector<std::function<void()>> resyncs;
  std::vector<storage::Notice> published;
  std::uint64_t next = 1;
};

class HubBus final : public storage::Bus {
 public:
  HubBus(BusHub& hub, int owner) : hub_(hub), owner_(owner) {}
  Status publish(std::string_view topic, std::string_view payload) override {
    const storage::Notice notice{std::string(topic), std::string(payload)};
    std::vector<Handler> handlers;
    {
      const std::lock_guard lock(hub_.mutex);
      hub_.published.push_back(notice);
      for (const auto& s : hub_.subscriptions) {
        if (s.owner != owner_ && s.topic == topic) handlers.push_back(s.handler);
      }
    }
    for (const auto& h : handlers) h(notice);
    return {};
  }
  std::uint64_t subscribe(std::string topic, Handler handler) override {
    const std::lock_guard lock(hub_.mutex);
    hub_.subscriptions.push_back({owner_, hub_.next, std::move(topic), std::move(handler)});
    return hub_.next++;
  }
  void unsubscribe(std::uint64_t id) override {
    const std::lock_guard lock(hub_.mutex);
    std::erase_if(hub_.subscriptions, [id](const auto& s) { return s.id == id; });
  }
  std::uint64_t on_resync(std::function<void()> handler) override {
    const std::lock_guard lock(hub_.mutex);
    hub_.resyncs.push_back(std::move(handler));
    return hub_.next++;
  }

 private:
  BusHub& hub_;
  int owner_;
};

/// The SQLite engine, saying it is shared (when `apps_file` is given: every store's apps
/// database is that one file) and recording the apps it dropped.
class TestEngine final : public storage::Engine {
 public:
  TestEngine(BusHub& hub, int owner, fs::path apps_file = {})
      : apps_file_(std::move(apps_file)), bus_(hub, owner) {}
  std::string_view kind() const override { return inner_->kind(); }
  bool shared() const override { return !apps_file_.empty(); }
  Result<std::unique_ptr<storage::Database>> open(std::string_view component, const fs::path& file,
                                                  storage::SqliteOptions options) override {
    return inner_->open(component, apps_file_.empty() ? file : apps_file_, options);
  }
  Result<std::unique_ptr<storage::Database>> open_app(const storage::AppPlacement& app) override {
    return inner_->open_app(app);
  }
  Status drop_app(const storage::AppPlacement& app) override {
    dropped.push_back(app.app + " " + app.placement + " " + app.sqlite_file.string());
    return inner_->drop_app(app);
  }
  storage::Bus& bus() override { return bus_; }
  std::string describe() const override { return "test"; }

  std::vector<std::string> dropped;

 private:
  std::unique_ptr<storage::Engine> inner_ = storage::sqlite_engine();
  fs::path apps_file_;
  HubBus bus_;
};

ReadinessContext ready_context() {
  ReadinessContext context;
  context.provided = {"lime.storage", "lime.ui", "lime.artifacts"};
  context.secret_present = [](std::string_view, std::string_view key) { return key == "token"; };
  return context;
}

std::unique_ptr<AppStore> open_store(const fs::path& state, std::shared_ptr<storage::Engine> e) {
  auto opened = AppStore::open(state, std::move(e));
  EXPECT_TRUE(opened.ok()) << opened.error().message;
  if (!opened.ok()) return nullptr;
  opened.value()->set_readiness_context(ready_context());
  return std::move(opened.value());
}

/// The notes package with another storage placement.
void write_placed_notes(const PackageDir& dir, std::string_view placement,
                        std::string_view isolation = "per-app-schema") {
  testing::write_notes_app(dir);
  std::string md = testing::notes_app_md();
  md.replace(md.find("placement: local-sqlite"), std::string_view("placement: local-sqlite").size(),
             "placement: " + std::string(placement));
  md.replace(md.find("isolation: per-app-database"),
             std::string_view("isolation: per-app-database").size(),
             "isolation: " + std::string(isolation));
  dir.write("APP.md", md);
}

std::size_t entries_in(const fs::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) ++n;
  return n;
}

TEST(StoreEngine, AServerPostgresqlAppIsRefusedOnSqliteSayingHowToRunHearth) {
  PackageDir state("state");
  PackageDir package("notes");
  write_placed_notes(package, "server-postgresql");
  auto store = open_store(state.path(), storage::sqlite_engine());
  auto r = store->install(package.path(), true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
  EXPECT_NE(r.error().message.find("server-postgresql"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--database postgresql://"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(store->list().value().empty());
  EXPECT_EQ(entries_in(state.path() / "apps/packages"), 0u);
  EXPECT_EQ(entries_in(state.path() / "apps/staging"), 0u);

  // An upgrade to a version that moves the data to the server is refused as well.
  PackageDir local("local");
  testing::write_notes_app(local);
  ASSERT_TRUE(store->install(local.path(), true).ok());
  std::string md = testing::notes_app_md();
  md.replace(md.find("version: 1.2.0"), 14, "version: 1.3.0");
  md.replace(md.find("placement: local-sqlite"), 23, "placement: server-postgresql");
  package.write("APP.md", md);
  auto up = store->upgrade(package.path(), true, true);
  ASSERT_FALSE(up.ok());
  EXPECT_NE(up.error().message.find("--database postgresql://"), std::string::npos)
      << up.error().message;
  EXPECT_EQ(store->find("notes").value().version, "1.2.0");
}

TEST(StoreEngine, ALocalAppKeepsItsFileAndQuotaAndOtherPlacementsAreKeptLocalAsBefore) {
  for (const char* placement : {"local-sqlite", "local-indexeddb", "host-managed", "external"}) {
    PackageDir state("state");
    PackageDir package("notes");
    write_placed_notes(package, placement, "per-app-database");
    auto store = open_store(state.path(), storage::sqlite_engine());
    ASSERT_TRUE(store->install(package.path(), true).ok()) << placement;
    const auto app = store->find("notes").value();
    const auto placed = store->placement_of(app);
    EXPECT_EQ(placed.placement, "local-sqlite") << placement;
    EXPECT_EQ(placed.sqlite_file, state.path() / "apps/data/notes/app.db");
    EXPECT_EQ(placed.sqlite.max_bytes, AppData::kDefaultQuota);
    auto enabled = store->set_enabled("notes", true);
    ASSERT_TRUE(enabled.ok()) << placement << ": " << enabled.error().message;
    // The migration made the app's table in its file.
    EXPECT_TRUE(fs::exists(state.path() / "apps/data/notes/app.db"));
    auto data = store->open_data(app);
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(json::serialize(data.value()->query("SELECT count(*) FROM notes", {}).value()),
              "[[0]]");
    const auto shown = store->show("notes").value();
    EXPECT_EQ(shown.at("storage").at("placement"), "local-sqlite");
    EXPECT_EQ(shown.at("migrations").as_array().size(), 1u);
  }
}

TEST(StoreEngine, UninstallDropsTheAppsDatabaseThroughTheEngineOnlyWhenItDeletes) {
  BusHub hub;
  PackageDir state("state");
  PackageDir package("notes");
  testing::write_notes_app(package);
  auto engine = std::make_shared<TestEngine>(hub, 1);
  auto store = open_store(state.path(), engine);
  const auto data = state.path() / "apps/data/notes";
  const auto installed = [&] {
    ASSERT_TRUE(store->install(package.path(), true).ok());
    ASSERT_TRUE(store->set_enabled("notes", true).ok());
    ASSERT_TRUE(fs::exists(data / "app.db"));
  };

  installed();
  auto r = store->uninstall("notes", DataPolicy::kKeep);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(engine->dropped.empty());
  EXPECT_TRUE(fs::exists(data / "app.db"));
  fs::remove_all(data);

  installed();
  fs::create_directories(data / "artifacts");
  std::ofstream(data / "artifacts/a.bin") << "artifact";
  r = store->uninstall("notes", DataPolicy::kDelete);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(engine->dropped.size(), 1u);
  EXPECT_EQ(engine->dropped[0], "notes local-sqlite " + (data / "app.db").string());
  EXPECT_EQ(r.value().at("data"), "deleted");
  EXPECT_EQ(r.value().at("placement"), "local-sqlite");
  EXPECT_FALSE(fs::exists(data));  // the whole folder, as before

  // The export of a local app is its data folder as it was: the file, no tables apart.
  installed();
  const auto export_to = state.path() / "notes-export.tar.gz";
  r = store->uninstall("notes", DataPolicy::kExportThenDelete, export_to);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(engine->dropped.size(), 2u);
  EXPECT_FALSE(fs::exists(data));
  PackageDir back("back");
  const auto extracted = stage_archive(export_to, back.path() / "x");
  ASSERT_TRUE(extracted.ok()) << extracted.error().message;
  EXPECT_TRUE(fs::exists(extracted.value() / "app.db"));
  EXPECT_FALSE(fs::exists(extracted.value() / "tables"));
  auto file = storage::open_sqlite(extracted.value() / "app.db");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(file.value()->query("SELECT count(*) FROM notes").ok());
}

TEST(StoreEngine, OnASharedDatabaseEveryDaemonSeesTheAppsAndUnpacksTheirPackagesChecked) {
  BusHub hub;
  PackageDir shared("shared");
  PackageDir state_a("a");
  PackageDir state_b("b");
  PackageDir state_c("c");
  PackageDir package("notes");
  testing::write_notes_app(package);
  const auto apps_db = shared.path() / "apps.db";
  auto a = open_store(state_a.path(), std::make_shared<TestEngine>(hub, 1, apps_db));
  auto b = open_store(state_b.path(), std::make_shared<TestEngine>(hub, 2, apps_db));
  std::vector<std::string> told_a;
  std::vector<std::string> told_b;
  a->on_changed([&](std::string_view app) { told_a.emplace_back(app); });
  b->on_changed([&](std::string_view app) { told_b.emplace_back(app); });

  ASSERT_TRUE(a->install(package.path(), true).ok());
  EXPECT_EQ(told_b, std::vector<std::string>{"notes"});  // told by the bus
  {
    const std::lock_guard lock(hub.mutex);
    ASSERT_FALSE(hub.published.empty());
    EXPECT_EQ(hub.published.back().topic, "apps");
    EXPECT_EQ(hub.published.back().payload, R"({"app":"notes","action":"install"})");
  }

  // B lists it, and finds its package unpacked into its own packages folder.
  const auto listed = b->list().value();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "notes");
  const auto in_b = b->find("notes").value();
  EXPECT_EQ(in_b.dir.parent_path(), state_b.path() / "apps/packages/notes");
  EXPECT_EQ(in_b.dir.filename(), a->find("notes").value().dir.filename());
  EXPECT_TRUE(fs::exists(in_b.dir / "services/backend.py"));
  EXPECT_TRUE(fs::exists(in_b.dir / "storage/migrations/001_init.sql"));
  EXPECT_TRUE(b->integrity_problems(in_b).value().empty());

  // Enabled through B: enabled in A too, and A was told.
  told_a.clear();
  auto enabled = b->set_enabled("notes", true);
  ASSERT_TRUE(enabled.ok()) << enabled.error().message;
  EXPECT_TRUE(a->find("notes").value().enabled);
  EXPECT_EQ(told_a, std::vector<std::string>{"notes"});
  ASSERT_TRUE(a->set_enabled("notes", false).ok());
  EXPECT_FALSE(b->find("notes").value().enabled);

  // A package changed in the database is refused where it is unpacked: never placed, and the
  // app is not enabled, the file named.
  {
    auto db = storage::open_sqlite(apps_db).value();
    ASSERT_EQ(db->execute("UPDATE app_package_files SET bytes = ? WHERE path = ?",
                          {storage::Blob{"import os\n"}, std::string("services/backend.py")})
                  .value(),
              1);
  }
  auto c = open_store(state_c.path(), std::make_shared<TestEngine>(hub, 3, apps_db));
  const auto in_c = c->find("notes");
  ASSERT_TRUE(in_c.ok());
  EXPECT_FALSE(fs::exists(in_c.value().dir));
  auto refused = c->set_enabled("notes", true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("services/backend.py"), std::string::npos)
      << refused.error().message;
  EXPECT_FALSE(fs::exists(in_c.value().dir));
  EXPECT_EQ(entries_in(state_c.path() / "apps/staging"), 0u);

  // Upgraded through A and rolled back through B: each daemon has each version in its own
  // packages folder.
  {
    auto db = storage::open_sqlite(apps_db).value();
    ASSERT_TRUE(db->execute("UPDATE app_package_files SET bytes = ? WHERE path = ?",
                            {storage::Blob{"print('ready')\n"}, std::string("services/backend.py")})
                    .ok());
  }
  std::string md = testing::notes_app_md();
  md.replace(md.find("version: 1.2.0"), 14, "version: 1.3.0");
  package.write("APP.md", md);
  auto up = a->upgrade(package.path(), true, true);
  ASSERT_TRUE(up.ok()) << up.error().message;
  ASSERT_TRUE(up.value().upgraded);
  const auto upgraded_in_b = b->find("notes").value();
  EXPECT_EQ(upgraded_in_b.version, "1.3.0");
  EXPECT_EQ(upgraded_in_b.dir.parent_path(), state_b.path() / "apps/packages/notes");
  EXPECT_TRUE(b->integrity_problems(upgraded_in_b).value().empty());
  auto back = b->rollback("notes");
  ASSERT_TRUE(back.ok()) << back.error().message;
  const auto rolled_in_a = a->find("notes").value();
  EXPECT_EQ(rolled_in_a.version, "1.2.0");
  EXPECT_EQ(rolled_in_a.dir.parent_path(), state_a.path() / "apps/packages/notes");
  EXPECT_TRUE(a->integrity_problems(rolled_in_a).value().empty());

  // Uninstalled through A: gone for B, and its files gone from the database.
  ASSERT_TRUE(a->uninstall("notes", DataPolicy::kDelete).ok());
  EXPECT_TRUE(b->list().value().empty());
  auto db = storage::open_sqlite(apps_db).value();
  EXPECT_TRUE(db->query("SELECT path FROM app_package_files").value().empty());
}

}  // namespace
}  // namespace hearth::agentapp
