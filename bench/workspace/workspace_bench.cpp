// Virtual workspaces: scripts per second on a small workspace (the whole change: the JS worker's
// evaluation, validation, the SQLite commit with its history row) beside the evaluation alone,
// and render time for a large workspace. Google Benchmark; docs/benchmarks.md has the figures.
// Workers run unconfined here (no jail), so the figures are hearth's own share.
// GCC 12 reports -Wnull-dereference inside inlined Asio code (false positives in Boost headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "json/yaml.hpp"
#include "proc/testing.hpp"
#include "storage/storage.hpp"
#include "workspace/render.hpp"
#include "workspace/script.hpp"
#include "workspace/workspace.hpp"
#pragma GCC diagnostic pop

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace hearth;
using namespace hearth::workspace;

const char* const kSmall = R"(
name: bench
components:
  - id: c
    states:
      counter: {permission: rw, schema: {type: integer, minimum: 0}, initial: 0}
      box:
        permission: rw
        schema: {type: object, properties: {q: {type: string, maxLength: 100}}}
        initial: {q: ""}
      seen: {permission: r, schema: {type: array}, initial: [1, 2, 3]}
)";

template <class T>
T wait(proc::testing::IoThread& io, asio::awaitable<T> work) {
  auto future = asio::co_spawn(
      io.executor(),
      [w = std::move(work)]() mutable -> asio::awaitable<std::optional<T>> {
        co_return co_await std::move(w);
      },
      asio::use_future);
  return *future.get();
}

struct Small {
  proc::testing::IoThread io;
  BlockingExecutor blocking{1};
  fs::path dir;
  std::unique_ptr<Store> store;
  std::shared_ptr<jsworker::Pool> pool;
  std::shared_ptr<Workspace> ws;

  Small() {
    std::signal(SIGPIPE, SIG_IGN);
    std::string pattern = (fs::temp_directory_path() / "hearth-ws-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    dir = pattern;
    std::ofstream(dir / "workspace.yaml") << kSmall;
    Problems problems;
    auto def = load_definition(dir, problems);
    if (!def) std::abort();
    store = std::move(Store::open(dir / "ws.db")).value();
    jsworker::PoolConfig config;
    config.service = "bench";
    config.service_dir = dir;
    config.size = 1;
    config.worker_program = jsworker::default_worker_program();
    pool = std::make_shared<jsworker::Pool>(io.executor(), config);
    pool->start();
    ws = std::make_shared<Workspace>(io.executor(), std::move(*def),
                                     Workspace::Options{pool, store.get(), &blocking, nullptr});
    if (!wait(io, ws->open()).ok()) std::abort();
  }
  ~Small() {
    ws->close();
    pool->stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void BM_ExecuteCommit(benchmark::State& state) {
  Small s;
  for (auto _ : state) {
    ExecuteRequest r;
    r.script = "counter += 1; box.q = 'n' + counter;";
    auto out = wait(s.io, s.ws->execute(std::move(r)));
    if (!out.ok()) state.SkipWithError(out.error().message.c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExecuteCommit)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Commits to the store from several threads at once, each thread its own workspace (what the
// daemon's store threads do when several workspaces change at once), beside the disk's floor:
// one SQLite transaction a write, committed with synchronous=FULL, one writer.
struct Commits {
  fs::path dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<storage::Database> raw;
};
Commits* g_commits = nullptr;

void commits_setup(const benchmark::State& state) {
  g_commits = new Commits;
  std::string pattern = (fs::temp_directory_path() / "hearth-ws-commits-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) std::abort();
  g_commits->dir = pattern;
  g_commits->store = std::move(Store::open(g_commits->dir / "ws.db")).value();
  for (int t = 0; t < state.threads(); ++t) {
    if (!g_commits->store->reset("w" + std::to_string(t), 1, json::object{{"n", 0}}).ok()) {
      std::abort();
    }
  }
  g_commits->raw = std::move(storage::open_sqlite(g_commits->dir / "floor.db")).value();
  if (!g_commits->raw->execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").ok()) {
    std::abort();
  }
}

void commits_teardown(const benchmark::State&) {
  std::error_code ec;
  fs::remove_all(g_commits->dir, ec);
  delete g_commits;
  g_commits = nullptr;
}

void BM_StoreCommit(benchmark::State& state) {
  const std::string workspace = "w" + std::to_string(state.thread_index());
  std::int64_t version = 1;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    HistoryEntry entry;
    entry.actor = "bench";
    entry.kind = "script";
    entry.script = "n += 1";
    entry.outcome = "committed";
    const std::map<std::string, json::value> changed{{"n", json::value(version)}};
    if (auto done = g_commits->store->commit(workspace, version, changed, entry); !done.ok()) {
      state.SkipWithError(done.error().message.c_str());
      break;
    }
    ++version;
  }
  // Each thread's own rate; the counters of the threads are added: the store's rate.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.counters["commits/s"] = static_cast<double>(state.iterations()) / seconds;
}
BENCHMARK(BM_StoreCommit)
    ->ThreadRange(1, 8)
    ->Setup(commits_setup)
    ->Teardown(commits_teardown)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_SqliteFlushFloor(benchmark::State& state) {
  for (auto _ : state) {
    auto tx = g_commits->raw->begin();
    if (!tx.ok() || !g_commits->raw->execute("INSERT INTO t (v) VALUES ('x')").ok() ||
        !tx.value()->commit().ok()) {
      state.SkipWithError("the floor's write failed");
      break;
    }
  }
  state.counters["commits/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SqliteFlushFloor)
    ->Setup(commits_setup)
    ->Teardown(commits_teardown)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_ExecuteDryRun(benchmark::State& state) {
  Small s;
  for (auto _ : state) {
    ExecuteRequest r;
    r.script = "counter += 1; box.q = 'n' + counter;";
    r.dry_run = true;
    auto out = wait(s.io, s.ws->execute(std::move(r)));
    if (!out.ok()) state.SkipWithError(out.error().message.c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExecuteDryRun)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_EvaluateOnly(benchmark::State& state) {
  Small s;
  json::object values{
      {"counter", 0}, {"box", json::object{{"q", ""}}}, {"seen", json::array{1, 2, 3}}};
  for (auto _ : state) {
    jsworker::Job job;
    job.request =
        build_evaluation(s.ws->definition(), values, "counter += 1; box.q = 'n' + counter;", {});
    job.timeout = std::chrono::seconds(5);
    auto out = wait(s.io, s.pool->run(std::move(job)));
    if (!out.ok()) state.SkipWithError(out.error().message.c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateOnly)->Unit(benchmark::kMicrosecond)->UseRealTime();

/// A workspace of `n` states, each an array of 1,000 small objects.
std::pair<Definition, json::object> large(int n) {
  std::string yaml = "name: large\ncomponents:\n  - id: c\n    states:\n";
  json::object values;
  for (int i = 0; i < n; ++i) {
    const std::string name = "list_" + std::to_string(i);
    yaml += "      " + name + ": {permission: " + (i % 3 == 0 ? "rw" : "r") +
            ", schema: {type: array, items: {type: object, properties: {id: {type: integer}, "
            "name: {type: string}}}}, initial: []}\n";
    json::array items;
    for (int k = 0; k < 1000; ++k) {
      items.push_back(json::object{{"id", k}, {"name", "item number " + std::to_string(k)}});
    }
    values[name] = std::move(items);
  }
  Problems problems;
  auto def =
      parse_definition(json::yaml_to_json(yaml).value(), fs::temp_directory_path(), problems);
  if (!def) std::abort();
  return {std::move(*def), std::move(values)};
}

void BM_RenderLarge(benchmark::State& state) {
  auto [def, values] = large(static_cast<int>(state.range(0)));
  RenderOptions options;
  options.format = static_cast<Format>(state.range(1));
  std::size_t size = 0;
  for (auto _ : state) {
    auto text = render(def, 7, values, options);
    size = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["view_chars"] = static_cast<double>(size);
}
BENCHMARK(BM_RenderLarge)
    ->ArgsProduct({{10, 100}, {0, 1, 2}})
    ->ArgNames({"states", "format"})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
