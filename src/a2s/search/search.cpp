#include "a2s/search/search.hpp"

#include <libstemmer.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/ascii.hpp"

namespace hearth::a2s {
namespace {

// BM25F (docs/a2s.md, "Search"). One document per capability, its fields weighted:
enum Field {
  kCapName,
  kCapDescription,
  kServiceName,
  kServiceDescription,
  kVariables,
  kExamples,
  kFields
};
constexpr float kWeights[kFields] = {3.0F, 2.0F, 2.0F, 1.5F, 0.6F, 0.4F};
constexpr float kB[kFields] = {0.5F, 0.75F, 0.5F, 0.75F, 0.75F, 0.75F};
constexpr float kK1 = 1.2F;
/// Expansion terms count this much of the term they come from.
constexpr float kSynonymWeight = 0.5F;

const std::unordered_set<std::string>& stop_words() {
  static const std::unordered_set<std::string> kWords = {
      "a",     "an",   "and",  "any",    "are",   "as",    "at",    "be",   "by",   "can",
      "could", "do",   "for",  "from",   "get",   "give",  "have",  "how",  "i",    "i'd",
      "i'm",   "in",   "is",   "it",     "its",   "let",   "me",    "my",   "need", "of",
      "on",    "or",   "our",  "please", "s",     "show",  "so",    "some", "that", "the",
      "their", "them", "then", "there",  "this",  "to",    "up",    "us",   "use",  "want",
      "was",   "we",   "what", "whats",  "when",  "where", "which", "who",  "will", "with",
      "would", "you",  "your", "t",      "about", "into",  "than",  "also", "just", "like",
      "find",  "tell", "know", "all",    "via",   "using", "based"};
  return kWords;
}

/// Query expansion: a few everyday words and what API descriptions call them.
const std::unordered_map<std::string, std::vector<std::string>>& synonyms() {
  static const std::unordered_map<std::string, std::vector<std::string>> kTable = {
      {"weather", {"forecast", "temperature"}},
      {"forecast", {"weather"}},
      {"rain", {"weather", "precipitation"}},
      {"flight", {"airline", "air"}},
      {"fly", {"flight"}},
      {"plane", {"flight"}},
      {"hotel", {"lodging", "accommodation", "room"}},
      {"stay", {"hotel"}},
      {"room", {"hotel"}},
      {"mail", {"email"}},
      {"email", {"mail", "message"}},
      {"text", {"sms", "message"}},
      {"sms", {"text", "message"}},
      {"taxi", {"ride"}},
      {"cab", {"ride"}},
      {"ride", {"taxi", "driver"}},
      {"money", {"payment"}},
      {"pay", {"payment"}},
      {"charge", {"payment"}},
      {"translate", {"translation", "language"}},
      {"song", {"music", "track"}},
      {"music", {"song", "track"}},
      {"meeting", {"calendar", "event"}},
      {"appointment", {"calendar", "event"}},
      {"schedule", {"calendar", "event"}},
      {"parcel", {"package", "shipment"}},
      {"package", {"parcel", "shipment"}},
      {"stock", {"share", "quote"}},
      {"exchange", {"currency", "rate"}},
      {"convert", {"conversion", "exchange"}},
      {"direction", {"route"}},
      {"route", {"direction"}},
      {"address", {"geocode", "location"}},
      {"food", {"restaurant", "delivery"}},
      {"dinner", {"restaurant", "food"}},
      {"bug", {"issue"}},
      {"ticket", {"issue"}},
      {"book", {"reserve", "booking"}},
      {"reserve", {"book", "booking"}},
  };
  return kTable;
}

/// Lower-case words of a text: camelCase and snake_case split, letters and digits kept, UTF-8
/// letters kept as they are.
std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  char prev = 0;
  const auto flush = [&] {
    if (!current.empty()) out.push_back(std::move(current));
    current.clear();
  };
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool letter = ascii::is_alpha(c) || u >= 0x80;
    const bool digit = ascii::is_digit(c);
    if (!letter && !digit && c != '\'') {
      flush();
      prev = 0;
      continue;
    }
    if (c == '\'') {
      prev = c;
      continue;  // "what's" -> "whats"
    }
    // camelCase: a capital after a small letter starts a new word.
    if (ascii::is_upper(c) && prev != 0 && ascii::is_lower(prev)) flush();
    current += static_cast<char>(ascii::lower(c));
    prev = c;
  }
  flush();
  return out;
}

class Stemmer {
 public:
  Stemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {}
  ~Stemmer() { sb_stemmer_delete(stemmer_); }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  std::string stem(const std::string& word) {
    if (stemmer_ == nullptr) return word;
    const sb_symbol* s = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
    if (s == nullptr) return word;
    return std::string(reinterpret_cast<const char*>(s),
                       static_cast<std::size_t>(sb_stemmer_length(stemmer_)));
  }

 private:
  sb_stemmer* stemmer_;
};

/// The stemmer is not thread-safe: one per thread.
std::string stem(const std::string& word) {
  thread_local Stemmer stemmer;
  return stemmer.stem(word);
}

std::vector<std::string> terms(std::string_view text) {
  std::vector<std::string> out;
  for (auto& w : words(text)) {
    if (stop_words().count(w) != 0) continue;
    out.push_back(stem(w));
  }
  return out;
}

void variable_text(const Variables& vars, std::string& out) {
  for (const auto& v : vars) {
    out += ' ';
    out += v.name;
    out += ' ';
    out += v.description;
  }
}

void example_text(const json::value& v, std::string& out) {
  if (v.is_string()) {
    out += ' ';
    out += v.get_string();
  } else if (v.is_array()) {
    for (const auto& item : v.get_array()) example_text(item, out);
  } else if (v.is_object()) {
    for (const auto& [key, item] : v.get_object()) {
      out += ' ';
      out += key;
      example_text(item, out);
    }
  }
}

}  // namespace

struct SearchIndex::Impl {
  struct Posting {
    std::uint32_t doc;
    float weight;  ///< the term's saturated BM25F tf in the document (before idf)
  };
  struct Doc {
    std::uint32_t service;
    std::uint32_t capability;
  };
  std::vector<std::shared_ptr<const Definition>> definitions;
  std::vector<Doc> docs;
  std::unordered_map<std::string, std::uint32_t> vocabulary;
  std::vector<std::vector<Posting>> postings;
  std::vector<float> idf;
};

SearchIndex::SearchIndex(std::vector<std::shared_ptr<const Definition>> definitions)
    : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.definitions = std::move(definitions);
  // Field texts of every capability, as terms.
  struct Fields {
    std::vector<std::string> terms[kFields];
  };
  std::vector<Fields> fields;
  for (std::uint32_t s = 0; s < d.definitions.size(); ++s) {
    const auto& def = *d.definitions[s];
    const auto service_name = terms(def.service_name);
    const auto service_description = terms(def.service_description);
    for (std::uint32_t c = 0; c < def.capabilities.size(); ++c) {
      const auto& cap = def.capabilities[c];
      Fields f;
      f.terms[kCapName] = terms(cap.name);
      f.terms[kCapDescription] = terms(cap.description);
      f.terms[kServiceName] = service_name;
      f.terms[kServiceDescription] = service_description;
      std::string vars;
      variable_text(cap.input, vars);
      variable_text(cap.temp, vars);
      variable_text(cap.output, vars);
      f.terms[kVariables] = terms(vars);
      std::string examples;
      example_text(cap.examples, examples);
      f.terms[kExamples] = terms(examples);
      fields.push_back(std::move(f));
      d.docs.push_back({s, c});
    }
  }
  double avg[kFields] = {};
  for (const auto& f : fields) {
    for (int i = 0; i < kFields; ++i) avg[i] += static_cast<double>(f.terms[i].size());
  }
  for (auto& a : avg)
    a = fields.empty() ? 1.0 : std::max(1.0, a / static_cast<double>(fields.size()));
  std::vector<std::uint32_t> df;
  for (std::uint32_t doc = 0; doc < fields.size(); ++doc) {
    std::unordered_map<std::uint32_t, float> tf;  // term -> BM25F pseudo term frequency
    for (int i = 0; i < kFields; ++i) {
      const auto& ts = fields[doc].terms[i];
      const float norm = 1.0F - kB[i] + kB[i] * static_cast<float>(ts.size() / avg[i]);
      for (const auto& t : ts) {
        auto [it, fresh] = d.vocabulary.emplace(t, static_cast<std::uint32_t>(d.postings.size()));
        if (fresh) {
          d.postings.emplace_back();
          df.push_back(0);
        }
        tf[it->second] += kWeights[i] / norm;
      }
    }
    for (const auto& [term, w] : tf) {
      d.postings[term].push_back({doc, w / (kK1 + w)});
      ++df[term];
    }
  }
  const auto n = static_cast<double>(fields.size());
  d.idf.resize(df.size());
  for (std::size_t t = 0; t < df.size(); ++t) {
    d.idf[t] = static_cast<float>(std::log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)));
  }
  for (auto& p : d.postings) p.shrink_to_fit();
}

SearchIndex::~SearchIndex() = default;

std::vector<ServiceHit> SearchIndex::search(std::string_view query,
                                            const SearchOptions& options) const {
  const auto& d = *impl_;
  // Each word of the query is a group: its stem (weight 1) and its expansions (less). A
  // capability's score for a group is the best of the group's terms, so expansions never add
  // up past the word itself; the relevance is the sum over groups divided by what a capability
  // holding every word at full strength would get (docs/a2s.md, "Search").
  std::unordered_set<std::string> seen;
  std::unordered_map<std::uint32_t, float> scores;
  std::unordered_map<std::uint32_t, float> best;
  float ideal = 0;
  for (const auto& w : words(query)) {
    if (stop_words().count(w) != 0) continue;
    const std::string own = stem(w);
    if (!seen.insert(own).second) continue;
    std::vector<std::pair<std::string, float>> expanded = {{own, 1.0F}};
    if (auto it = synonyms().find(w); it != synonyms().end()) {
      for (const auto& s : it->second) expanded.emplace_back(stem(s), kSynonymWeight);
    } else if (auto st = synonyms().find(own); st != synonyms().end()) {
      for (const auto& s : st->second) expanded.emplace_back(stem(s), kSynonymWeight);
    }
    // A word no capability has (a date, a city) cannot tell services apart: it is left out of
    // the ideal, so it does not lower every score alike.
    float share = 0;
    best.clear();
    for (const auto& [term, weight] : expanded) {
      auto it = d.vocabulary.find(term);
      if (it == d.vocabulary.end()) continue;
      const float idf = d.idf[it->second] * weight;
      share = std::max(share, idf);
      for (const auto& p : d.postings[it->second]) {
        float& b = best[p.doc];
        b = std::max(b, idf * p.weight);
      }
    }
    for (const auto& [doc, v] : best) scores[doc] += v;
    ideal += share;
  }
  if (scores.empty() || ideal <= 0) return {};
  // Group by service: its score is its best capability's.
  std::unordered_map<std::uint32_t, ServiceHit> services;
  for (const auto& [doc, raw] : scores) {
    const double relevance = std::min(1.0, static_cast<double>(raw / ideal));
    if (relevance < options.min_score || relevance <= 0) continue;
    const auto& info = d.docs[doc];
    auto& hit = services[info.service];
    hit.definition = d.definitions[info.service];
    hit.capabilities.push_back({info.capability, relevance});
    hit.score = std::max(hit.score, relevance);
  }
  std::vector<ServiceHit> out;
  out.reserve(services.size());
  for (auto& [s, hit] : services) out.push_back(std::move(hit));
  const auto by_score = [](const ServiceHit& a, const ServiceHit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.definition->service_name < b.definition->service_name;
  };
  const std::size_t keep = std::min(options.limit, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                    by_score);
  out.resize(keep);
  for (auto& hit : out) {
    auto& caps = hit.capabilities;
    std::sort(caps.begin(), caps.end(), [&](const CapabilityHit& a, const CapabilityHit& b) {
      if (a.score != b.score) return a.score > b.score;
      return hit.definition->capabilities[a.index].name <
             hit.definition->capabilities[b.index].name;
    });
    if (caps.size() > options.capabilities_limit) caps.resize(options.capabilities_limit);
  }
  return out;
}

std::size_t SearchIndex::memory_bytes() const {
  const auto& d = *impl_;
  std::size_t bytes = sizeof(Impl) + d.docs.capacity() * sizeof(Impl::Doc) +
                      d.idf.capacity() * sizeof(float) +
                      d.postings.capacity() * sizeof(std::vector<Impl::Posting>);
  for (const auto& p : d.postings) bytes += p.capacity() * sizeof(Impl::Posting);
  for (const auto& [term, id] : d.vocabulary) {
    bytes += term.capacity() + sizeof(std::pair<const std::string, std::uint32_t>) + 16;
  }
  bytes += d.vocabulary.bucket_count() * sizeof(void*);
  return bytes;
}

namespace {

double rounded(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

}  // namespace

json::value registry_response(const std::vector<ServiceHit>& hits) {
  json::array services;
  for (const auto& hit : hits) {
    const auto& def = *hit.definition;
    json::object s;
    s["name"] = def.service_name;
    s["description"] = def.service_description;
    s["domain"] = def.domain;
    s["version"] = def.version;
    s["relevance_score"] = rounded(hit.score);
    json::array caps;
    const json::array* written = nullptr;
    if (const auto* c = json::member(def.document, "capabilities"); c != nullptr && c->is_array()) {
      written = &c->get_array();
    }
    for (const auto& ch : hit.capabilities) {
      const auto& cap = def.capabilities[ch.index];
      json::object c;
      c["name"] = cap.name;
      c["description"] = cap.description;
      c["relevance_score"] = rounded(ch.score);
      const json::object* as_written = nullptr;
      if (written != nullptr && ch.index < written->size() && (*written)[ch.index].is_object()) {
        as_written = &(*written)[ch.index].get_object();
      }
      for (const char* key :
           {"requiredScopes", "inputVariables", "tempVariables", "outputVariables", "request"}) {
        if (as_written != nullptr) {
          if (const auto* v = as_written->if_contains(key)) c[key] = *v;
        }
      }
      caps.push_back(std::move(c));
    }
    s["relevant_capabilities"] = std::move(caps);
    services.push_back(std::move(s));
  }
  return json::object{{"services", std::move(services)}};
}

}  // namespace hearth::a2s
