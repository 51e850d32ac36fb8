// a2s_search_corpus: service search on a registry of ~1,000 definitions and requests written to
// it (bench/a2s/corpus, docs/a2s-search-results.md), beside a plain BM25 baseline.
//
//   a2s_search_corpus CORPUS_DIR [--split dev|test|all] [--terse] [--typos] [--misses] [--scale N]
//                     [--min-top1 X] [--min-top5 Y] [--explain REQUEST]
//
// CORPUS_DIR/services/*.yaml: {category, services: [{name, domain, description,
// capabilities: [{name, description}]}]}; CORPUS_DIR/requests*.yaml: {requests: [{query,
// accept: [service names], class, split}]}. A request counts as found first (top-1) when an
// accepted service ranks first, within five (top-5) when one ranks in the first five. Prints
// both measures for hearth's SearchIndex and for the baseline (BM25, k1 1.2, b 0.75, over the
// name, description and capability texts as one field, lower-cased words, no stemming, no stop
// words), overall, by class and by split; --misses lists hearth's misses, each with how its words
// were read. --scale N also times
// every request on the registry copied up to N definitions (names suffixed), for mean and p99.
// --explain REQUEST prints one request's first five with what matched, and nothing else.
// --terse gives each service the shape a registry generated from a one-line public catalogue
// has: its name, its description, and one capability named for its category with the same
// description; the capabilities' own texts are left out. --typos replaces the requests by
// those of every class but "typo", each with one typing mistake in one of its two longest
// lower-case words (a letter left out, swapped, changed to a keyboard neighbour, doubled, or a
// neighbour added; places and kinds from a fixed sequence), in its own class: compared class by
// class with the run without it, what a mistyped request loses.
// Exits 1 when hearth's top-1 or top-5 is under the floor given, 2 on bad input.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "a2s/definition/definition.hpp"
#include "a2s/search/search.hpp"
#include "reading.hpp"

namespace a2s = hearth::a2s;
namespace json = hearth::json;
namespace fs = std::filesystem;

namespace {

struct Request {
  std::string query;
  std::set<std::string> accept;
  std::string kind;
  std::string split;
};

using Definitions = std::vector<std::shared_ptr<const a2s::Definition>>;

std::string string_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

bool read_yaml(const fs::path& path, json::value& out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto doc = a2s::yaml_to_json(text.str());
  if (!doc) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), doc.error().message.c_str());
    return false;
  }
  out = std::move(*doc);
  return true;
}

std::vector<fs::path> sorted_files(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.starts_with(prefix) && e.path().extension() == ".yaml") {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A definition as A2S has it: the catalogue entry's texts, one API key, each capability a GET.
/// `terse`: as a registry generated from a one-line catalogue would have it, the service's
/// capabilities replaced by one named for its category, described by the service's description.
std::shared_ptr<a2s::Definition> definition_of(const json::object& s, const std::string& category,
                                               bool terse) {
  auto def = std::make_shared<a2s::Definition>();
  def->service_name = string_at(s, "name");
  def->domain = string_at(s, "domain");
  def->service_description = string_at(s, "description");
  def->version = "1.0";
  def->checksum = std::string(64, '0');
  const auto add = [&](std::string name, std::string description) {
    a2s::Capability cap;
    cap.name = std::move(name);
    cap.description = std::move(description);
    a2s::Variable key;
    key.name = "API_KEY";
    key.description = "API key for " + def->service_name;
    key.storage = a2s::Storage::kService;
    cap.input.push_back(std::move(key));
    def->capabilities.push_back(std::move(cap));
  };
  if (terse) {
    add(category, def->service_description);
    return def;
  }
  const json::value* caps = s.if_contains("capabilities");
  if (caps != nullptr && caps->is_array()) {
    for (const auto& c : caps->get_array()) {
      const json::object* co = c.if_object();
      if (co != nullptr) add(string_at(*co, "name"), string_at(*co, "description"));
    }
  }
  return def;
}

bool load(const fs::path& dir, bool terse, Definitions& defs, std::vector<Request>& requests) {
  std::set<std::string> names;
  for (const auto& file : sorted_files(dir / "services", "")) {
    json::value doc;
    if (!read_yaml(file, doc)) return false;
    const json::object* root = doc.if_object();
    const json::value* list = root != nullptr ? root->if_contains("services") : nullptr;
    if (list == nullptr || !list->is_array()) {
      std::fprintf(stderr, "%s: expected {category, services: [...]}\n", file.c_str());
      return false;
    }
    for (const auto& item : list->get_array()) {
      const json::object* s = item.if_object();
      if (s == nullptr || string_at(*s, "name").empty()) {
        std::fprintf(stderr, "%s: a service without a name\n", file.c_str());
        return false;
      }
      auto def = definition_of(*s, string_at(*root, "category"), terse);
      if (!names.insert(def->service_name).second) {
        std::fprintf(stderr, "%s: %s is defined twice\n", file.c_str(), def->service_name.c_str());
        return false;
      }
      defs.push_back(std::move(def));
    }
  }
  for (const auto& file : sorted_files(dir, "requests")) {
    json::value doc;
    if (!read_yaml(file, doc)) return false;
    const json::object* root = doc.if_object();
    const json::value* list = root != nullptr ? root->if_contains("requests") : nullptr;
    if (list == nullptr || !list->is_array()) {
      std::fprintf(stderr, "%s: expected {requests: [...]}\n", file.c_str());
      return false;
    }
    for (const auto& item : list->get_array()) {
      const json::object* o = item.if_object();
      if (o == nullptr) return false;
      Request r{string_at(*o, "query"), {}, string_at(*o, "class"), string_at(*o, "split")};
      if (const json::value* a = o->if_contains("accept"); a != nullptr && a->is_array()) {
        for (const auto& n : a->get_array()) {
          if (n.is_string()) r.accept.emplace(n.as_string());
        }
      }
      for (const auto& n : r.accept) {
        if (names.count(n) == 0) {
          std::fprintf(stderr, "%s: \"%s\" accepts %s, which no file defines\n", file.c_str(),
                       r.query.c_str(), n.c_str());
          return false;
        }
      }
      if (r.query.empty() || r.accept.empty()) {
        std::fprintf(stderr, "%s: every request needs a query and accept\n", file.c_str());
        return false;
      }
      requests.push_back(std::move(r));
    }
  }
  return true;
}

/// The baseline: BM25 over one field of lower-cased words.
class Bm25 {
 public:
  explicit Bm25(const Definitions& defs) {
    double total = 0;
    for (const auto& def : defs) {
      std::string text = def->service_name + " " + def->service_description;
      for (const auto& c : def->capabilities) text += " " + c.name + " " + c.description;
      std::unordered_map<std::string, int> tf;
      const auto ws = split(text);
      for (const auto& w : ws) ++tf[w];
      length_.push_back(static_cast<double>(ws.size()));
      total += static_cast<double>(ws.size());
      for (const auto& [w, n] : tf) postings_[w].emplace_back(docs_, n);
      ++docs_;
    }
    avg_ = docs_ == 0 ? 1 : total / docs_;
  }

  /// Service indexes, best first, at most `limit`.
  std::vector<std::size_t> search(const std::string& query, std::size_t limit) const {
    std::unordered_map<std::size_t, double> score;
    std::set<std::string> seen;
    for (const auto& w : split(query)) {
      if (!seen.insert(w).second) continue;
      auto it = postings_.find(w);
      if (it == postings_.end()) continue;
      const double df = static_cast<double>(it->second.size());
      const double idf = std::log(1 + (docs_ - df + 0.5) / (df + 0.5));
      for (const auto& [doc, n] : it->second) {
        const double norm = 1 - 0.75 + 0.75 * length_[doc] / avg_;
        score[doc] += idf * n * 2.2 / (n + 1.2 * norm);
      }
    }
    std::vector<std::pair<double, std::size_t>> ranked;
    ranked.reserve(score.size());
    for (const auto& [doc, s] : score) ranked.emplace_back(-s, doc);
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < ranked.size() && i < limit; ++i) out.push_back(ranked[i].second);
    return out;
  }

 private:
  static std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    for (const char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
        cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (!cur.empty()) {
        out.push_back(std::move(cur));
        cur.clear();
      }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
  }

  std::unordered_map<std::string, std::vector<std::pair<std::size_t, int>>> postings_;
  std::vector<double> length_;
  double avg_ = 1;
  double docs_ = 0;
};

struct Tally {
  std::size_t n = 0;
  std::size_t top1 = 0;
  std::size_t top5 = 0;
  void add(std::size_t rank) {
    ++n;
    if (rank == 1) ++top1;
    if (rank >= 1 && rank <= 5) ++top5;
  }
};

std::string percent(std::size_t part, std::size_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

int usage() {
  std::fprintf(stderr,
               "usage: a2s_search_corpus CORPUS_DIR [--split dev|test|all] [--terse] [--typos] "
               "[--misses] [--scale N] [--min-top1 X] [--min-top5 Y] [--explain REQUEST]\n");
  return 2;
}

/// `word` with one typing mistake of kind `kind` at letter `at` (1 <= at < size - 1): a letter
/// left out, two swapped, one changed to its neighbour on the keyboard, one doubled, or a
/// neighbour typed beside it.
std::string mistake(const std::string& word, unsigned kind, std::size_t at) {
  static const char* const kRows[] = {"qwertyuiop", "asdfghjkl", "zxcvbnm"};
  const auto neighbour = [](char c) {
    for (const char* row : kRows) {
      const std::string_view r(row);
      const auto i = r.find(c);
      if (i != std::string_view::npos) return i + 1 < r.size() ? r[i + 1] : r[i - 1];
    }
    return c;
  };
  std::string w = word;
  switch (kind % 5) {
    case 0:
      w.erase(at, 1);
      break;
    case 1:
      std::swap(w[at], w[at + 1]);
      break;
    case 2:
      w[at] = neighbour(w[at]);
      break;
    case 3:
      w.insert(at, 1, w[at]);
      break;
    default:
      w.insert(at, 1, neighbour(w[at]));
      break;
  }
  return w;
}

/// The requests of every class but "typo", each again with one typing mistake in one of its two
/// longest lower-case words of 5 letters or more (one request per word), in the same class:
/// what a request's class keeps when it is mistyped. The same requests each run.
std::vector<Request> with_typos(const std::vector<Request>& requests) {
  std::vector<Request> out;
  std::uint32_t state = 7;  // a fixed linear congruential sequence: places and kinds
  unsigned kind = 0;
  for (const auto& r : requests) {
    if (r.kind == "typo") continue;
    std::vector<std::pair<std::size_t, std::size_t>> words;  // (start, length)
    for (std::size_t i = 0; i < r.query.size();) {
      std::size_t j = i;
      while (j < r.query.size() && std::isalpha(static_cast<unsigned char>(r.query[j])) != 0) ++j;
      if (j == i) {
        ++i;
        continue;
      }
      const bool lower = std::all_of(r.query.begin() + static_cast<std::ptrdiff_t>(i),
                                     r.query.begin() + static_cast<std::ptrdiff_t>(j),
                                     [](char c) { return c >= 'a' && c <= 'z'; });
      if (lower && j - i >= 5) words.emplace_back(i, j - i);
      i = j;
    }
    std::stable_sort(words.begin(), words.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (words.size() > 2) words.resize(2);
    for (const auto& [start, length] : words) {
      state = state * 1103515245U + 12345U;
      const std::size_t at = 1 + (state >> 16) % (length - 2);
      Request t = r;
      t.query = r.query.substr(0, start) + mistake(r.query.substr(start, length), kind++, at) +
                r.query.substr(start + length);
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  std::string split = "all";
  bool show_misses = false;
  std::size_t scale = 0;
  double min_top1 = 0;
  double min_top5 = 0;
  std::string explain;
  bool terse = false;
  bool typos = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--split" && i + 1 < argc) {
      split = argv[++i];
    } else if (arg == "--terse") {
      terse = true;
    } else if (arg == "--typos") {
      typos = true;
    } else if (arg == "--misses") {
      show_misses = true;
    } else if (arg == "--scale" && i + 1 < argc) {
      scale = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--min-top1" && i + 1 < argc) {
      min_top1 = std::strtod(argv[++i], nullptr);
    } else if (arg == "--explain" && i + 1 < argc) {
      explain = argv[++i];
    } else if (arg == "--min-top5" && i + 1 < argc) {
      min_top5 = std::strtod(argv[++i], nullptr);
    } else if (arg.starts_with("--") || !dir.empty()) {
      return usage();
    } else {
      dir = arg;
    }
  }
  if (dir.empty()) return usage();
  Definitions defs;
  std::vector<Request> all;
  if (!load(dir, terse, defs, all)) return 2;
  std::vector<Request> requests;
  for (auto& r : all) {
    if (split == "all" || r.split == split) requests.push_back(std::move(r));
  }
  if (typos) requests = with_typos(requests);
  if (defs.empty() || requests.empty()) {
    std::fprintf(stderr, "no definitions or no requests\n");
    return 2;
  }

  const auto t0 = std::chrono::steady_clock::now();
  const a2s::SearchIndex index(defs);
  const auto build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!explain.empty()) {
    // One request's first five, each capability's matches (what `registry search --explain`
    // prints for a registry folder).
    a2s::SearchOptions one;
    one.limit = 5;
    one.explain = true;
    std::printf("%s\n", a2s::bench::reading(index, explain, "").c_str());
    for (const auto& hit : index.search(explain, one)) {
      std::printf("%.3f %s: %s\n", hit.score, hit.definition->service_name.c_str(),
                  hit.definition->service_description.c_str());
      for (const auto& cap : hit.capabilities) {
        const auto& c = hit.definition->capabilities[cap.index];
        std::printf("  %.3f %s: %s\n", cap.score, c.name.c_str(), c.description.c_str());
        for (const auto& m : cap.matches) {
          std::printf("      %s -> %s (%s %.2f, idf %.2f) %.3f\n", m.word.c_str(), m.term.c_str(),
                      m.via.c_str(), m.weight, m.idf, m.score);
        }
      }
    }
    return 0;
  }
  const Bm25 baseline(defs);
  std::map<std::string, Tally> ours;
  std::map<std::string, Tally> base;
  std::vector<std::string> misses;
  a2s::SearchOptions options;
  options.limit = 5;
  for (const auto& r : requests) {
    const auto hits = index.search(r.query, options);
    std::size_t rank = 0;
    std::string got;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      const auto& name = hits[i].definition->service_name;
      if (rank == 0 && r.accept.count(name) != 0) rank = i + 1;
      if (i < 3) {
        char score[32];
        std::snprintf(score, sizeof score, " %.2f", hits[i].score);
        got += (i ? ", " : "") + name + score;
      }
    }
    for (const auto& key : {std::string("all"), "class " + r.kind, "split " + r.split}) {
      ours[key].add(rank);
    }
    if (rank != 1) {
      std::string accept;
      for (const auto& a : r.accept) accept += (accept.empty() ? "" : " ") + a;
      misses.push_back("  [" + r.kind + "] \"" + r.query + "\" rank " +
                       (rank ? std::to_string(rank) : std::string(">5")) + "; accept " + accept +
                       "; got " + (got.empty() ? "nothing" : got));
      if (show_misses) misses.back() += "\n" + a2s::bench::reading(index, r.query, "      ");
    }
    const auto b = baseline.search(r.query, 5);
    std::size_t brank = 0;
    for (std::size_t i = 0; i < b.size() && brank == 0; ++i) {
      if (r.accept.count(defs[b[i]]->service_name) != 0) brank = i + 1;
    }
    for (const auto& key : {std::string("all"), "class " + r.kind, "split " + r.split}) {
      base[key].add(brank);
    }
  }
  std::printf("definitions: %zu, requests: %zu (split %s), index built in %.0f ms\n\n", defs.size(),
              requests.size(), split.c_str(), build_ms);
  std::printf("| requests | n | hearth top-1 | hearth top-5 | BM25 top-1 | BM25 top-5 |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const auto& [key, t] : ours) {
    const Tally& b = base[key];
    std::printf("| %s | %zu | %s | %s | %s | %s |\n", key.c_str(), t.n,
                percent(t.top1, t.n).c_str(), percent(t.top5, t.n).c_str(),
                percent(b.top1, b.n).c_str(), percent(b.top5, b.n).c_str());
  }
  if (show_misses) {
    std::printf("\nhearth's misses (no accepted service first): %zu\n", misses.size());
    for (const auto& m : misses) std::printf("%s\n", m.c_str());
  }

  if (scale > defs.size()) {
    Definitions scaled = defs;
    for (std::size_t copy = 1; scaled.size() < scale; ++copy) {
      for (std::size_t i = 0; i < defs.size() && scaled.size() < scale; ++i) {
        auto def = std::make_shared<a2s::Definition>(*defs[i]);
        def->service_name += " " + std::to_string(copy);
        scaled.push_back(std::move(def));
      }
    }
    const auto b0 = std::chrono::steady_clock::now();
    const a2s::SearchIndex big(scaled);
    const auto big_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - b0).count();
    std::vector<double> us;
    for (const auto& r : requests) (void)big.search(r.query, options);  // warm-up
    for (int round = 0; round < 20; ++round) {
      for (const auto& r : requests) {
        const auto q0 = std::chrono::steady_clock::now();
        const auto hits = big.search(r.query, options);
        us.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - q0)
                .count());
        if (hits.size() > options.limit) return 2;
      }
    }
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (const double u : us) sum += u;
    std::printf(
        "\nscaled to %zu definitions: index built in %.0f ms, %.1f MiB; %zu searches: mean %.0f "
        "us, p50 %.0f us, p99 %.0f us, max %.0f us\n",
        scaled.size(), big_ms, static_cast<double>(big.memory_bytes()) / (1024.0 * 1024.0),
        us.size(), sum / static_cast<double>(us.size()), us[us.size() / 2],
        us[us.size() * 99 / 100], us.back());
  }

  const Tally& t = ours["all"];
  const double top1 = static_cast<double>(t.top1) / static_cast<double>(t.n);
  const double top5 = static_cast<double>(t.top5) / static_cast<double>(t.n);
  if (top1 + 1e-9 < min_top1 || top5 + 1e-9 < min_top5) {
    std::printf("\nFAIL: top-1 %.3f (floor %.3f), top-5 %.3f (floor %.3f)\n", top1, min_top1, top5,
                min_top5);
    return 1;
  }
  return 0;
}
