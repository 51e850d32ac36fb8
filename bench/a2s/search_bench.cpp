// a2s_search_bench: SearchIndex at registry scale. 10,000 definitions are generated in memory
// from a seeded RNG over an embedded vocabulary (2-5 capabilities each, variables with
// descriptions), then Google Benchmark measures the index build and queries over a fixed list
// of 50; afterwards every query is timed on its own (steady_clock) to print mean and p99.
//
//   a2s_search_bench [--definitions N] [--rounds R] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "a2s/definition/definition.hpp"
#include "a2s/search/search.hpp"

namespace a2s = hearth::a2s;

namespace {

std::size_t g_definitions = 10000;
int g_rounds = 20;

// Topic areas: a domain word, the nouns its APIs deal in, and words that describe them.
struct Topic {
  std::string_view area;
  std::array<std::string_view, 6> nouns;
  std::array<std::string_view, 6> words;
};

constexpr Topic kTopics[] = {
    {"weather",
     {"forecast", "temperature", "rainfall", "wind", "storm", "humidity"},
     {"hourly", "daily", "local", "severe", "observed", "predicted"}},
    {"travel",
     {"flight", "airport", "itinerary", "seat", "boarding pass", "layover"},
     {"international", "domestic", "cheap", "direct", "return", "one-way"}},
    {"lodging",
     {"hotel", "room", "reservation", "guest", "stay", "amenity"},
     {"nightly", "available", "luxury", "budget", "family", "refundable"}},
    {"messaging",
     {"email", "message", "inbox", "attachment", "thread", "recipient"},
     {"unread", "sent", "draft", "archived", "urgent", "encrypted"}},
    {"scheduling",
     {"event", "meeting", "calendar", "invitation", "reminder", "slot"},
     {"recurring", "free", "busy", "shared", "upcoming", "all-day"}},
    {"payments",
     {"payment", "invoice", "refund", "card", "charge", "payout"},
     {"pending", "captured", "failed", "recurring", "partial", "disputed"}},
    {"maps",
     {"address", "route", "coordinate", "place", "distance", "map tile"},
     {"nearby", "driving", "walking", "fastest", "geographic", "postal"}},
    {"language",
     {"translation", "language", "phrase", "glossary", "transcript", "subtitle"},
     {"source", "target", "detected", "formal", "literal", "bilingual"}},
    {"finance",
     {"exchange rate", "currency", "stock", "quote", "dividend", "portfolio"},
     {"historical", "real-time", "closing", "foreign", "intraday", "adjusted"}},
    {"news",
     {"headline", "article", "publisher", "story", "feed", "topic"},
     {"breaking", "trending", "regional", "political", "financial", "sports"}},
    {"logistics",
     {"parcel", "shipment", "tracking number", "courier", "label", "warehouse"},
     {"delivered", "in-transit", "delayed", "express", "returned", "customs"}},
    {"mobility",
     {"ride", "driver", "fare", "pickup", "vehicle", "trip"},
     {"shared", "estimated", "scheduled", "electric", "premium", "airport"}},
    {"food",
     {"restaurant", "menu", "order", "recipe", "ingredient", "table"},
     {"vegan", "spicy", "takeout", "delivered", "seasonal", "gluten-free"}},
    {"media",
     {"song", "playlist", "album", "podcast", "episode", "movie"},
     {"streaming", "popular", "new", "offline", "curated", "classic"}},
    {"storage",
     {"file", "folder", "document", "backup", "share link", "version"},
     {"shared", "encrypted", "large", "deleted", "synced", "public"}},
    {"development",
     {"issue", "pull request", "build", "repository", "deployment", "incident"},
     {"open", "merged", "failing", "critical", "assigned", "stale"}},
    {"sales",
     {"contact", "lead", "deal", "account", "pipeline", "opportunity"},
     {"qualified", "won", "lost", "enterprise", "inbound", "dormant"}},
    {"health",
     {"workout", "step count", "heart rate", "sleep", "calorie", "medication"},
     {"daily", "weekly", "resting", "active", "average", "prescribed"}},
    {"home",
     {"thermostat", "light", "lock", "camera", "sensor", "plug"},
     {"smart", "indoor", "outdoor", "scheduled", "dimmed", "armed"}},
    {"jobs",
     {"job posting", "candidate", "resume", "interview", "salary", "employer"},
     {"remote", "full-time", "part-time", "senior", "entry-level", "contract"}},
    {"property",
     {"listing", "apartment", "house", "mortgage", "valuation", "lease"},
     {"for-sale", "rental", "furnished", "suburban", "downtown", "estimated"}},
    {"crypto",
     {"coin", "wallet", "token", "exchange", "market cap", "transaction"},
     {"volatile", "stable", "on-chain", "daily", "trending", "listed"}},
    {"environment",
     {"air quality", "pollen", "pollutant", "ozone", "uv index", "emission"},
     {"hazardous", "moderate", "seasonal", "urban", "measured", "forecast"}},
    {"sports",
     {"score", "match", "team", "league", "player", "fixture"},
     {"live", "final", "home", "away", "season", "playoff"}},
    {"utilities",
     {"short link", "qr code", "time zone", "holiday", "barcode", "unit"},
     {"custom", "local", "public", "printable", "regional", "converted"}},
    {"commerce",
     {"product", "cart", "order", "return", "coupon", "review"},
     {"discounted", "shipped", "cancelled", "bestselling", "wishlist", "verified"}},
};

constexpr std::string_view kVerbs[] = {
    "get",   "list",   "search", "create",    "update",       "delete", "cancel",
    "book",  "track",  "send",   "convert",   "estimate",     "find",   "schedule",
    "check", "export", "import", "summarize", "subscribe to", "compare"};
constexpr std::string_view kQualifiers[] = {"for a user",
                                            "by identifier",
                                            "within a date range",
                                            "near a location",
                                            "in bulk",
                                            "with filters",
                                            "for a country",
                                            "for the current account",
                                            "sorted by relevance",
                                            "with pagination"};
constexpr std::string_view kBrands[] = {"Nimbus",  "Atlas",  "Vector",   "Harbor",  "Summit",
                                        "Pioneer", "Beacon", "Quartz",   "Orbit",   "Juniper",
                                        "Falcon",  "Cobalt", "Meridian", "Sierra",  "Aurora",
                                        "Zenith",  "Lumen",  "Nova",     "Cascade", "Ember"};
constexpr std::string_view kVarNouns[] = {"id",    "date",  "city",     "country",
                                          "limit", "query", "currency", "email",
                                          "name",  "start", "end",      "amount"};

std::string title_case(std::string_view s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == ' ' || c == '-') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string upper_snake(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += (c == ' ' || c == '-') ? '_'
                                  : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

template <class T, std::size_t N>
const T& pick(std::mt19937_64& rng, const T (&items)[N]) {
  return items[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}
template <class T, std::size_t N>
const T& pick(std::mt19937_64& rng, const std::array<T, N>& items) {
  return items[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}

std::vector<std::shared_ptr<const a2s::Definition>> generate(std::size_t count) {
  std::mt19937_64 rng(20261124);
  std::vector<std::shared_ptr<const a2s::Definition>> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Topic& topic = pick(rng, kTopics);
    const std::string brand(pick(rng, kBrands));
    auto def = std::make_shared<a2s::Definition>();
    def->service_name = brand + title_case(topic.area) + std::to_string(i);
    def->domain = "api." + [&] {
      std::string d = brand + std::string(topic.area) + std::to_string(i);
      std::transform(d.begin(), d.end(), d.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      return d;
    }() + ".example";
    def->version = "1.0";
    def->checksum = std::string(64, '0');
    def->service_description = std::string(pick(rng, topic.words)) + " " + std::string(topic.area) +
                               " data: " + std::string(pick(rng, topic.nouns)) + "s and " +
                               std::string(pick(rng, topic.nouns)) + "s from " + brand;
    const int caps = std::uniform_int_distribution<int>(2, 5)(rng);
    for (int c = 0; c < caps; ++c) {
      a2s::Capability cap;
      const std::string verb(pick(rng, kVerbs));
      const std::string noun(pick(rng, topic.nouns));
      const std::string word(pick(rng, topic.words));
      cap.name = title_case(verb) + " " + title_case(noun) + (c ? std::to_string(c) : "");
      // The two picks in the order this generator has always made them (the corpus, and so
      // the figures in docs/benchmarks.md, stay the same).
      const std::string_view detail = pick(rng, topic.nouns);
      const std::string_view qualifier = pick(rng, kQualifiers);
      cap.description = title_case(verb).substr(0, 1);
      cap.description += verb.substr(1);
      for (const std::string_view part :
           {std::string_view(" "), std::string_view(word), std::string_view(" "),
            std::string_view(noun), std::string_view("s "), qualifier,
            std::string_view(", including "), detail, std::string_view(" details")}) {
        cap.description += part;
      }
      a2s::Variable key;
      key.name = "API_KEY";
      key.description = brand + " API key";
      key.storage = a2s::Storage::kService;
      cap.input.push_back(key);
      const int vars = std::uniform_int_distribution<int>(1, 4)(rng);
      std::string query;
      for (int v = 0; v < vars; ++v) {
        a2s::Variable var;
        const std::string vn(pick(rng, kVarNouns));
        var.name = upper_snake(noun) + "_" + upper_snake(vn) + std::to_string(v);
        var.description = "The ";
        var.description += pick(rng, topic.words);
        var.description += " " + noun;
        var.description += " " + vn;
        var.type = vn == "limit" || vn == "amount" ? a2s::VarType::kNumber : a2s::VarType::kString;
        if (vn == "date" || vn == "start" || vn == "end") var.format = "date";
        var.optional = v > 0;
        query += (v ? "&" : "?") + vn + std::to_string(v) + "=${" + var.name + "}";
        cap.temp.push_back(std::move(var));
      }
      cap.request = "GET /v1/" + upper_snake(noun) + " HTTP/1.1\nHost: " + def->domain +
                    "\nAuthorization: Bearer ${API_KEY}\n\n" + query + "\n";
      def->capabilities.push_back(std::move(cap));
    }
    out.push_back(std::move(def));
  }
  return out;
}

const std::vector<std::shared_ptr<const a2s::Definition>>& corpus() {
  static const auto defs = generate(g_definitions);
  return defs;
}

const a2s::SearchIndex& shared_index() {
  static const a2s::SearchIndex index(corpus());
  return index;
}

constexpr std::string_view kQueries[] = {
    "weather forecast for tomorrow",
    "will it rain this weekend",
    "find a cheap direct flight to London",
    "book a hotel room for two nights",
    "cancel my hotel reservation",
    "send an email with an attachment",
    "show unread messages in my inbox",
    "schedule a meeting next Tuesday",
    "find a free slot on the shared calendar",
    "refund a failed card payment",
    "create an invoice for a customer",
    "driving route between two addresses",
    "coordinates of a postal address",
    "translate a phrase into French",
    "detect the language of a text",
    "convert 100 dollars to euros",
    "historical exchange rate of the yen",
    "current stock quote and dividend",
    "breaking news headlines",
    "track my parcel with a tracking number",
    "when will my shipment be delivered",
    "estimate the fare of a ride to the airport",
    "order takeout from a vegan restaurant",
    "recipe with chicken and rice",
    "play a popular playlist",
    "search podcast episodes about history",
    "upload a large file and create a share link",
    "list failing builds in the repository",
    "open a critical incident",
    "add a qualified lead to the sales pipeline",
    "how many steps did I walk today",
    "resting heart rate this week",
    "turn off the indoor lights",
    "set the thermostat to 21 degrees",
    "remote senior engineering job posting",
    "apartment for rent downtown",
    "estimated valuation of my house",
    "bitcoin market cap and price",
    "air quality and ozone levels in the city",
    "pollen forecast for hay fever",
    "live score of the match",
    "league table for this season",
    "shorten a long url into a short link",
    "generate a printable qr code",
    "what time zone is Sydney in",
    "public holidays in Germany",
    "return a product from my order",
    "apply a discount coupon to the cart",
    "export all contacts for the current account",
    "summarize movie reviews",
};

void BM_BuildIndex(benchmark::State& state) {
  const auto& defs = corpus();
  std::size_t bytes = 0;
  for (auto _ : state) {
    a2s::SearchIndex index(defs);
    bytes = index.memory_bytes();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["definitions"] = static_cast<double>(defs.size());
  state.counters["memory_MiB"] = static_cast<double>(bytes) / (1024.0 * 1024.0);
}
BENCHMARK(BM_BuildIndex)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Query(benchmark::State& state) {
  const auto& index = shared_index();
  std::size_t i = 0;
  std::size_t hits = 0;
  for (auto _ : state) {
    auto result = index.search(kQueries[i % std::size(kQueries)]);
    hits += result.size();
    benchmark::DoNotOptimize(result);
    ++i;
  }
  state.counters["hits_per_query"] =
      static_cast<double>(hits) / static_cast<double>(std::max<std::size_t>(i, 1));
}
BENCHMARK(BM_Query)->Unit(benchmark::kMicrosecond);

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

void print_summary() {
  using clock = std::chrono::steady_clock;
  const auto& defs = corpus();
  std::size_t caps = 0;
  for (const auto& d : defs) caps += d->capabilities.size();

  const long rss_before = rss_kib();
  const auto t0 = clock::now();
  const a2s::SearchIndex index(defs);
  const auto t1 = clock::now();
  const long rss_after = rss_kib();
  const double build_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();

  for (auto q : kQueries) benchmark::DoNotOptimize(index.search(q));  // warm up
  std::vector<double> us;
  us.reserve(std::size(kQueries) * static_cast<std::size_t>(g_rounds));
  for (int r = 0; r < g_rounds; ++r) {
    for (auto q : kQueries) {
      const auto a = clock::now();
      auto hits = index.search(q);
      const auto b = clock::now();
      benchmark::DoNotOptimize(hits);
      us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
  }
  // Reading the request alone (WordNet, spelling, names): the part of a query that does not
  // grow with the registry.
  double read_sum = 0;
  for (int r = 0; r < g_rounds; ++r) {
    for (auto q : kQueries) {
      const auto a = clock::now();
      auto words = index.interpret(q);
      const auto b = clock::now();
      benchmark::DoNotOptimize(words);
      read_sum += std::chrono::duration<double, std::micro>(b - a).count();
    }
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  const auto at = [&](double p) {
    return us[std::min(us.size() - 1,
                       static_cast<std::size_t>(p * static_cast<double>(us.size())))];
  };
  std::printf("\nsummary: %zu definitions, %zu capabilities, %zu queries x %d rounds\n",
              defs.size(), caps, std::size(kQueries), g_rounds);
  std::printf("  index build:   %.1f ms (one build, steady_clock)\n", build_ms);
  std::printf("  index memory:  %.2f MiB (SearchIndex::memory_bytes); RSS grew %.2f MiB\n",
              static_cast<double>(index.memory_bytes()) / (1024.0 * 1024.0),
              static_cast<double>(rss_after - rss_before) / 1024.0);
  std::printf("  query latency: mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n",
              sum / static_cast<double>(us.size()), at(0.50), at(0.99), us.back());
  std::printf("  of which reading the request: mean %.1f us\n",
              read_sum / static_cast<double>(us.size()));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--definitions") == 0 && i + 1 < argc) {
      g_definitions = static_cast<std::size_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (i > 0 && std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      g_rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  return 0;
}
