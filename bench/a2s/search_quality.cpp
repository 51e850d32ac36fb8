// a2s_search_quality: how often SearchIndex ranks the expected service first (top-1) and among
// the first three (top-3) over a folder of definitions and a file of queries.
//
//   a2s_search_quality SERVICES_DIR QUERIES_YAML [--min-top3 0.NN] [--explain]
//
// QUERIES_YAML: {queries: [{query, expect: serviceName, capability?: name}, ...]}. Prints the
// accuracies, the capability accuracy (the expected capability first within the right service)
// and every miss with the top three it got; exits 1 when top-3 accuracy is below --min-top3
// (default 0.85), 2 on bad input. --explain prints, under each miss, how its words were read
// (SearchIndex::interpret).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "a2s/definition/definition.hpp"
#include "a2s/search/search.hpp"
#include "reading.hpp"

namespace a2s = hearth::a2s;
namespace json = hearth::json;

namespace {

struct Query {
  std::string text;
  std::string expect;
  std::string capability;  // empty: not checked
};

int usage() {
  std::fprintf(stderr,
               "usage: a2s_search_quality SERVICES_DIR QUERIES_YAML [--min-top3 0.NN] "
               "[--explain]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  double min_top3 = 0.85;
  bool explain = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--min-top3" && i + 1 < argc) {
      min_top3 = std::strtod(argv[++i], nullptr);
    } else if (arg == "--explain") {
      explain = true;
    } else if (arg.rfind("--", 0) == 0) {
      return usage();
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return usage();

  a2s::LoadResult loaded = a2s::load_directory(positional[0]);
  for (const auto& failure : loaded.failures) {
    for (const auto& p : failure.problems) {
      std::fprintf(stderr, "%s: %s\n", failure.file.string().c_str(), p.to_string().c_str());
    }
  }
  if (!loaded.failures.empty() || loaded.definitions.empty()) {
    std::fprintf(stderr, "%zu definition file(s) failed to load, %zu loaded\n",
                 loaded.failures.size(), loaded.definitions.size());
    return 2;
  }

  std::ifstream in(positional[1]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", positional[1].c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto doc = a2s::yaml_to_json(text.str());
  if (!doc) {
    std::fprintf(stderr, "%s: %s\n", positional[1].c_str(), doc.error().message.c_str());
    return 2;
  }
  std::vector<Query> queries;
  const json::object* root = doc->if_object();
  const json::array* list =
      root && root->contains("queries") ? root->at("queries").if_array() : nullptr;
  if (!list) {
    std::fprintf(stderr, "%s: expected {queries: [...]}\n", positional[1].c_str());
    return 2;
  }
  for (const auto& item : *list) {
    const json::object* o = item.if_object();
    const json::value* q = o ? o->if_contains("query") : nullptr;
    const json::value* e = o ? o->if_contains("expect") : nullptr;
    if (!q || !e || !q->is_string() || !e->is_string()) {
      std::fprintf(stderr, "%s: every entry needs query and expect strings\n",
                   positional[1].c_str());
      return 2;
    }
    Query query{std::string(q->as_string()), std::string(e->as_string()), {}};
    if (const json::value* c = o->if_contains("capability"); c && c->is_string()) {
      query.capability = std::string(c->as_string());
    }
    queries.push_back(std::move(query));
  }
  if (queries.empty()) {
    std::fprintf(stderr, "%s: no queries\n", positional[1].c_str());
    return 2;
  }

  const a2s::SearchIndex index(loaded.definitions);
  a2s::SearchOptions options;
  options.limit = 3;
  std::size_t top1 = 0;
  std::size_t top3 = 0;
  std::size_t cap_checked = 0;
  std::size_t cap_top1 = 0;
  std::vector<std::string> misses;
  std::vector<std::string> cap_misses;
  for (const Query& q : queries) {
    const auto hits = index.search(q.text, options);
    std::string got;
    std::size_t rank = 0;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      if (i) got += ", ";
      char score[32];
      std::snprintf(score, sizeof score, " (%.2f)", hits[i].score);
      got += hits[i].definition->service_name + score;
      if (rank == 0 && hits[i].definition->service_name == q.expect) rank = i + 1;
    }
    if (rank == 1) ++top1;
    if (rank >= 1 && rank <= 3) ++top3;
    if (rank != 1) {
      misses.push_back("  \"" + q.text + "\"\n      expected " + q.expect + " (rank " +
                       (rank ? std::to_string(rank) : std::string(">3")) +
                       "), got: " + (got.empty() ? "nothing" : got));
      if (explain) misses.back() += "\n" + a2s::bench::reading(index, q.text, "        ");
    }
    if (!q.capability.empty()) {
      ++cap_checked;
      std::string best;
      for (const auto& h : hits) {
        if (h.definition->service_name == q.expect && !h.capabilities.empty()) {
          best = h.definition->capabilities[h.capabilities[0].index].name;
        }
      }
      if (best == q.capability) {
        ++cap_top1;
      } else {
        cap_misses.push_back("  \"" + q.text + "\"\n      expected " + q.expect + " / " +
                             q.capability + ", got " + (best.empty() ? "-" : best));
      }
    }
  }

  const double n = static_cast<double>(queries.size());
  const double top3_acc = static_cast<double>(top3) / n;
  std::printf("services: %zu, queries: %zu\n", loaded.definitions.size(), queries.size());
  std::printf("top-1 accuracy: %.3f (%zu/%zu)\n", static_cast<double>(top1) / n, top1,
              queries.size());
  std::printf("top-3 accuracy: %.3f (%zu/%zu)\n", top3_acc, top3, queries.size());
  if (cap_checked) {
    std::printf("capability top-1 (within the expected service): %.3f (%zu/%zu)\n",
                static_cast<double>(cap_top1) / static_cast<double>(cap_checked), cap_top1,
                cap_checked);
  }
  std::printf("\nservice misses (not ranked first): %zu\n", misses.size());
  for (const auto& m : misses) std::printf("%s\n", m.c_str());
  std::printf("\ncapability misses: %zu\n", cap_misses.size());
  for (const auto& m : cap_misses) std::printf("%s\n", m.c_str());
  if (top3_acc + 1e-9 < min_top3) {
    std::printf("\nFAIL: top-3 accuracy %.3f is below the floor %.3f\n", top3_acc, min_top3);
    return 1;
  }
  std::printf("\nok: top-3 accuracy %.3f >= floor %.3f\n", top3_acc, min_top3);
  return 0;
}
