// hearth's JSON writer (json::serialize) against Boost.JSON 1.81's serialize, which it replaced,
// on three documents: records as a tool result or a workspace state holds them (objects of
// strings, integers, doubles, booleans), a chat transcript (long strings with escapes), and a
// series of doubles. Google Benchmark; docs/benchmarks.md has the figures.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "json/json.hpp"

namespace {

using namespace hearth;

json::value records() {
  std::mt19937_64 random(1);
  std::uniform_real_distribution<double> unit(0, 1);
  json::array out;
  for (int i = 0; i < 2000; ++i) {
    json::object r;
    r["id"] = i;
    r["name"] = "item " + std::to_string(i);
    r["price"] = 42.5 + i * 0.25;
    r["ratio"] = unit(random);
    r["active"] = i % 3 != 0;
    r["tags"] = json::array{"groceries", "weekly", "shared"};
    r["description"] =
        "A \"typical\" description of the item, with an accent (café) and a newline\n";
    r["position"] = json::object{{"x", static_cast<std::int64_t>(random() % 10000)},
                                 {"y", unit(random) * 1000}};
    r["owner"] = nullptr;
    out.emplace_back(std::move(r));
  }
  return out;
}

json::value transcript() {
  std::mt19937_64 random(2);
  json::array out;
  const std::string words[] = {"the",    "workspace", "state", "holds", "a",      "list",
                               "of",     "todos",     "and",   "their", "budget", "\"quoted\"",
                               "line\n", "tab\t",     "naïve", "→",     "{json}", "path\\to"};
  for (int i = 0; i < 500; ++i) {
    std::string text;
    const std::size_t n = 80 + random() % 300;
    for (std::size_t w = 0; w < n; ++w) text += words[random() % std::size(words)] + " ";
    out.emplace_back(json::object{{"role", i % 2 == 0 ? "user" : "assistant"},
                                  {"content", text},
                                  {"tokens", static_cast<std::int64_t>(n * 2)}});
  }
  return out;
}

json::value series() {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal(100, 15);
  json::array out;
  for (int i = 0; i < 50000; ++i) out.emplace_back(normal(random));
  return out;
}

template <class Write>
void run(benchmark::State& state, const json::value& doc, Write write) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string text = write(doc);
    bytes += text.size();
    benchmark::DoNotOptimize(text);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

const auto kHearth = [](const json::value& v) { return json::serialize(v); };
const auto kBoost = [](const json::value& v) { return boost::json::serialize(v); };

void BM_Records_Hearth(benchmark::State& s) {
  run(s, records(), kHearth);
}
void BM_Records_Boost(benchmark::State& s) {
  run(s, records(), kBoost);
}
void BM_Transcript_Hearth(benchmark::State& s) {
  run(s, transcript(), kHearth);
}
void BM_Transcript_Boost(benchmark::State& s) {
  run(s, transcript(), kBoost);
}
void BM_Series_Hearth(benchmark::State& s) {
  run(s, series(), kHearth);
}
void BM_Series_Boost(benchmark::State& s) {
  run(s, series(), kBoost);
}

BENCHMARK(BM_Records_Hearth)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Records_Boost)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Transcript_Hearth)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Transcript_Boost)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Series_Hearth)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Series_Boost)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
