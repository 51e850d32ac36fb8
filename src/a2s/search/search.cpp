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
      // Currencies by name: what exchange-rate APIs call them.
      {"euro", {"currency", "exchange"}},
      {"dollar", {"currency", "exchange"}},
      {"pound", {"currency", "exchange"}},
      {"yen", {"currency", "exchange"}},
      {"cook", {"recipe"}},
      {"dish", {"recipe"}},
      {"subway", {"transit", "metro"}},
      {"metro", {"transit", "subway"}},
      {"tram", {"transit"}},
      {"bus", {"transit"}},
      {"film", {"movie"}},
      {"cinema", {"movie", "showtime"}},
      {"house", {"property", "home"}},
      {"home", {"property", "house"}},
      {"heating", {"thermostat", "temperature"}},
      {"steps", {"activity"}},
  };
  return kTable;
}

/// The expansion table by stem ("meetings", "meeting" and "meet" all find the calendar terms),
/// its expansions stemmed too. Built once.
const std::vector<std::string>* expansions(const std::string& stemmed);

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

const std::vector<std::string>* expansions(const std::string& stemmed) {
  static const auto table = [] {
    std::unordered_map<std::string, std::vector<std::string>> t;
    for (const auto& [word, more] : synonyms()) {
      auto& into = t[stem(word)];
      for (const auto& m : more) {
        const std::string s = stem(m);
        if (std::find(into.begin(), into.end(), s) == into.end()) into.push_back(s);
      }
    }
    return t;
  }();
  auto it = table.find(stemmed);
  return it == table.end() ? nullptr : &it->second;
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
  std::vector<std::uint32_t> first_doc;  ///< per service: its first document (they are in a row)
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
    d.first_doc.push_back(static_cast<std::uint32_t>(d.docs.size()));
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
  for (auto& a : avg) {
    a = fields.empty() ? 1.0 : std::max(1.0, a / static_cast<double>(fields.size()));
  }
  std::vector<std::uint32_t> df;
  for (std::uint32_t doc = 0; doc < fields.size(); ++doc) {
    std::unordered_map<std::uint32_t, float> tf;  // term -> BM25F pseudo term frequency
    for (int i = 0; i < kFields; ++i) {
      const auto& ts = fields[doc].terms[i];
      const float norm =
          1.0F - kB[i] + kB[i] * static_cast<float>(static_cast<double>(ts.size()) / avg[i]);
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

namespace {

/// Per-thread scratch space of a query, sized to the largest index queried on the thread, so a
/// query allocates nothing in proportion to the index (dense arrays, cleared through the lists of
/// what was touched).
struct Scratch {
  std::vector<float> score;             ///< per document
  std::vector<float> best;              ///< per document, within one query word
  std::vector<std::uint32_t> mark;      ///< per document: the word `best` belongs to
  std::vector<std::uint32_t> touched;   ///< documents with a score
  std::vector<float> service_score;     ///< per service
  std::vector<std::uint32_t> services;  ///< services with a score
  std::uint32_t word = 0;

  void fit(std::size_t docs, std::size_t service_count) {
    if (score.size() < docs) {
      score.assign(docs, 0.0F);
      best.assign(docs, 0.0F);
      mark.assign(docs, 0);
    }
    if (service_score.size() < service_count) service_score.assign(service_count, 0.0F);
  }
};

}  // namespace

std::vector<ServiceHit> SearchIndex::search(std::string_view query,
                                            const SearchOptions& options) const {
  const auto& d = *impl_;
  thread_local Scratch sc;
  sc.fit(d.docs.size(), d.definitions.size());
  // Each word of the query is a group: its stem (weight 1) and its expansions (less). A
  // capability's score for a group is the best of the group's terms, so expansions never add
  // up past the word itself; the relevance is the sum over groups divided by what a capability
  // holding every word at full strength would get (docs/a2s.md, "Search").
  std::unordered_set<std::string> seen;
  float ideal = 0;
  for (const auto& w : words(query)) {
    if (stop_words().count(w) != 0) continue;
    const std::string own = stem(w);
    if (!seen.insert(own).second) continue;
    std::vector<std::pair<std::string, float>> expanded = {{own, 1.0F}};
    if (const auto* more = expansions(own)) {
      for (const auto& e : *more) expanded.emplace_back(e, kSynonymWeight);
    }
    // A word no capability has (a date, a city) cannot tell services apart: it is left out of
    // the ideal, so it does not lower every score alike.
    ++sc.word;
    float share = 0;
    std::vector<std::uint32_t> group_docs;
    const bool single = expanded.size() == 1;
    for (const auto& [term, weight] : expanded) {
      auto it = d.vocabulary.find(term);
      if (it == d.vocabulary.end()) continue;
      const float idf = d.idf[it->second] * weight;
      share = std::max(share, idf);
      for (const auto& p : d.postings[it->second]) {
        const float v = idf * p.weight;
        if (single) {
          // One term: its value is the word's (the common case: no grouping needed).
          if (sc.score[p.doc] == 0.0F) sc.touched.push_back(p.doc);
          sc.score[p.doc] += v;
          continue;
        }
        if (sc.mark[p.doc] != sc.word) {
          sc.mark[p.doc] = sc.word;
          sc.best[p.doc] = v;
          group_docs.push_back(p.doc);
        } else if (v > sc.best[p.doc]) {
          sc.best[p.doc] = v;
        }
      }
    }
    for (const auto doc : group_docs) {
      if (sc.score[doc] == 0.0F) sc.touched.push_back(doc);
      sc.score[doc] += sc.best[doc];
    }
    ideal += share;
  }
  std::vector<ServiceHit> out;
  if (ideal > 0) {
    // A service's score is its best capability's.
    for (const auto doc : sc.touched) {
      const double relevance = std::min(1.0, static_cast<double>(sc.score[doc] / ideal));
      if (relevance <= 0 || relevance < options.min_score) continue;
      const auto service = d.docs[doc].service;
      if (sc.service_score[service] == 0.0F) sc.services.push_back(service);
      sc.service_score[service] =
          std::max(sc.service_score[service], static_cast<float>(relevance));
    }
    const auto by_score = [&](std::uint32_t a, std::uint32_t b) {
      if (sc.service_score[a] != sc.service_score[b]) {
        return sc.service_score[a] > sc.service_score[b];
      }
      return d.definitions[a]->service_name < d.definitions[b]->service_name;
    };
    const std::size_t keep = std::min(options.limit, sc.services.size());
    std::partial_sort(sc.services.begin(), sc.services.begin() + static_cast<std::ptrdiff_t>(keep),
                      sc.services.end(), by_score);
    for (std::size_t i = 0; i < keep; ++i) {
      const auto service = sc.services[i];
      ServiceHit hit;
      hit.definition = d.definitions[service];
      hit.score = sc.service_score[service];
      const auto begin = d.first_doc[service];
      const auto end = begin + static_cast<std::uint32_t>(hit.definition->capabilities.size());
      for (auto doc = begin; doc < end; ++doc) {
        const double relevance = std::min(1.0, static_cast<double>(sc.score[doc] / ideal));
        if (relevance <= 0 || relevance < options.min_score) continue;
        hit.capabilities.push_back({d.docs[doc].capability, relevance});
      }
      auto& caps = hit.capabilities;
      std::sort(caps.begin(), caps.end(), [&](const CapabilityHit& a, const CapabilityHit& b) {
        if (a.score != b.score) return a.score > b.score;
        return hit.definition->capabilities[a.index].name <
               hit.definition->capabilities[b.index].name;
      });
      if (caps.size() > options.capabilities_limit) caps.resize(options.capabilities_limit);
      out.push_back(std::move(hit));
    }
  }
  // Leave the scratch space clean for the next query.
  for (const auto doc : sc.touched) sc.score[doc] = 0.0F;
  for (const auto service : sc.services) sc.service_score[service] = 0.0F;
  sc.touched.clear();
  sc.services.clear();
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
