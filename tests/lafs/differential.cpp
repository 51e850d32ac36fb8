// Differential test: hearth's envelope validation (src/lafs/validate.cpp) against ajv 8 with
// ajv-formats (tests/lafs/ajv_validate.cjs) on every fixture and on generated mutations of them.
// The mutations come from a fixed seed, so every run checks the same documents.
//
// Usage: hearth_lafs_differential --fixtures DIR --schema FILE --node-modules DIR --ajv-script FILE
//                                 [--count N] [--seed S] [--work DIR]
// Exit 0 when both sides agree on every document and both verdicts occur often enough for the
// comparison to mean something; 1 otherwise (the disagreements are printed).

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "json/json.hpp"
#include "lafs/validate.hpp"

namespace fs = std::filesystem;
using namespace hearth;

namespace {

// splitmix64: deterministic on every platform, unlike the standard distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::uint64_t s_;
};

json::value parse(const std::string& text) {
  return json::parse_text(text).value();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Strings chosen near the edges of what the schema accepts: formats, patterns, enums, lengths.
std::vector<std::string> interesting_strings() {
  std::vector<std::string> s = {
      "",
      "x",
      "ab",
      "abc",
      "1.0.0",
      "1.0",
      "1.0.0.0",
      "01.2.3",
      "v1.0.0",
      "1.0.0 ",
      " 1.0.0",
      "1.0.0\n",
      "2026-02-11T00:00:00Z",
      "2026-02-11t00:00:00z",
      "2026-02-11 00:00:00Z",
      "2026-02-11T00:00:00",
      "2026-02-11",
      "2026-02-30T00:00:00Z",
      "2024-02-29T23:59:59.999+05:30",
      "2023-02-29T00:00:00Z",
      "2026-02-11T24:00:00Z",
      "2016-12-31T23:59:60Z",
      "2016-12-31T23:59:60+01:00",
      "2017-01-01T00:59:60+01:00",
      "2026-02-11T00:00:00+0530",
      "2026-02-11T00:00:00-05",
      "2026-02-11T00:00:00+24:00",
      "2026-02-11T00:00:00.Z",
      "2026-02-11\xC2\xA0"
      "00:00:00Z",
      "2026-02-11T00:00:00ZT",
      "2026-13-01T00:00:00Z",
      "cli",
      "http",
      "grpc",
      "sdk",
      "ws",
      "HTTP",
      "minimal",
      "standard",
      "full",
      "custom",
      "verbose",
      "offset",
      "cursor",
      "none",
      "page",
      "VALIDATION",
      "AUTH",
      "PERMISSION",
      "NOT_FOUND",
      "CONFLICT",
      "RATE_LIMIT",
      "TRANSIENT",
      "INTERNAL",
      "CONTRACT",
      "MIGRATION",
      "validation",
      "retry",
      "retry_modified",
      "escalate",
      "stop",
      "wait",
      "refresh_context",
      "authenticate",
      "abort",
      "E_VALIDATION_SCHEMA",
      "E_RATE_LIMITED",
      "E_FAKE_UNREGISTERED",
      "E_X",
      "E__X",
      "E_X_",
      "E_a_B",
      "E_1_2",
      "E_X_Y_",
      "X_VALIDATION_SCHEMA",
      "E_VALIDATION-SCHEMA",
      "https://lafs.dev/schemas/v1/envelope.schema.json",
      "https://lafs.dev/schemas/v2/envelope.schema.json",
      "https://lafs.dev/docs/errors/rate-limited",
      "http://a",
      "mailto:a@b.c",
      "urn:isbn:0451450523",
      "http://[::1]:8080/x",
      "http://[1::2::3]/",
      "http://[v1.fe]/",
      "http://[::ffff:1.2.3.4]/",
      "http://[1:2:3:4:5:6:7:8]/",
      "http://[1:2:3:4:5:6:7::]/",
      "http://[1:2:3:4:5:6:7:8:9]/",
      "http://user:pw@host:80/p?q=1#f",
      "http://host:8a/",
      "http://a@b@c/",
      "http:",
      "x:/",
      "foo:bar",
      "/relative",
      "lafs.dev/docs",
      "http://exa mple.com",
      "http://%zz/",
      "http://%41/",
      "http://h/\xC3\xA9",
      "HTTP://EXAMPLE.COM/",
      "a+b-c.d:x",
      "1a:b",
      "http://x/?q#f#g",
      "http://x/#f?g",
      "http://[::1",
      "h\xC3\xA9llo",
      "\xF0\x9F\x98\x80\xF0\x9F\x98\x80",
      "e\xCC\x81",
      "\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7",
  };
  for (std::size_t n :
       {127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049}) {
    s.push_back(std::string(n, 'a'));
  }
  // Lengths are counted in code points: 128 two-byte characters is 128, not 256.
  std::string wide;
  for (int i = 0; i < 128; ++i) wide += "\xC3\xA9";
  s.push_back(wide);
  s.push_back(wide + "\xC3\xA9");
  std::string astral;
  for (int i = 0; i < 128; ++i) astral += "\xF0\x9F\x98\x80";
  s.push_back(astral);
  return s;
}

std::vector<json::value> interesting_values(const std::vector<std::string>& strings, Rng& rng) {
  std::vector<json::value> v = {nullptr,
                                true,
                                false,
                                0,
                                1,
                                -1,
                                2,
                                3,
                                250,
                                1000,
                                1001,
                                1024,
                                -0.0,
                                0.5,
                                1.5,
                                2.0,
                                1e3,
                                1e300,
                                -1e-9,
                                json::value(std::uint64_t{18446744073709551615ULL}),
                                json::array{},
                                json::object{},
                                json::array{1, "a"}};
  for (int i = 0; i < 6; ++i) v.push_back(json::value(rng.pick(strings)));
  v.push_back(parse(R"({"code":"W","message":"m"})"));
  v.push_back(parse(R"([{"code":"W","message":"m"}])"));
  v.push_back(parse(R"([{"code":"W"}])"));
  v.push_back(parse(R"({"mode":"none"})"));
  v.push_back(parse(R"({"mode":"cursor","nextCursor":null,"hasMore":false})"));
  v.push_back(parse(R"({"mode":"offset","limit":10,"offset":0,"hasMore":true,"total":3})"));
  v.push_back(parse(
      R"({"code":"E_VALIDATION_SCHEMA","message":"m","category":"VALIDATION","retryable":false,"retryAfterMs":null,"details":{}})"));
  v.push_back(parse(
      R"({"code":"E_RATE_LIMITED","message":"m","category":"RATE_LIMIT","retryable":true,"retryAfterMs":5,"details":{},"agentAction":"wait","docUrl":"https://x.y/z"})"));
  return v;
}

const std::vector<std::string>& keys_to_add() {
  static const std::vector<std::string> k = {"extra",
                                             "_unknown_extra",
                                             "x-vendor",
                                             "nextCursor",
                                             "offset",
                                             "limit",
                                             "hasMore",
                                             "total",
                                             "mode",
                                             "error",
                                             "page",
                                             "result",
                                             "success",
                                             "_meta",
                                             "$schema",
                                             "_extensions",
                                             "sessionId",
                                             "warnings",
                                             "agentAction",
                                             "docUrl",
                                             "details",
                                             "escalationRequired",
                                             "suggestedAction",
                                             "retryAfterMs",
                                             "strict",
                                             "code",
                                             "message",
                                             "category",
                                             "retryable",
                                             "contextVersion",
                                             "mvi",
                                             "transport",
                                             "deprecated"};
  return k;
}

// Every container in the document, with a way back to it.
void containers(json::value& v, std::vector<json::value*>& out, int depth = 0) {
  if (depth > 6) return;
  if (v.is_object()) {
    out.push_back(&v);
    for (auto& kv : v.get_object()) containers(kv.value(), out, depth + 1);
  } else if (v.is_array()) {
    out.push_back(&v);
    for (auto& item : v.get_array()) containers(item, out, depth + 1);
  }
}

// Members whose strings the schema constrains (formats, patterns, enums, lengths).
bool mutate_constrained_string(json::value& doc, Rng& rng,
                               const std::vector<std::string>& strings) {
  static const std::vector<std::pair<std::string, std::string>> kHot = {
      {"", "$schema"},
      {"_meta", "timestamp"},
      {"_meta", "specVersion"},
      {"_meta", "schemaVersion"},
      {"_meta", "requestId"},
      {"_meta", "operation"},
      {"_meta", "sessionId"},
      {"_meta", "transport"},
      {"_meta", "mvi"},
      {"error", "code"},
      {"error", "docUrl"},
      {"error", "message"},
      {"error", "category"},
      {"error", "agentAction"},
      {"error", "suggestedAction"},
      {"page", "nextCursor"},
      {"page", "mode"}};
  if (!doc.is_object()) return false;
  const auto& [section, key] = rng.pick(kHot);
  json::value* target = section.empty() ? &doc : doc.get_object().if_contains(section);
  if (target == nullptr || !target->is_object()) return false;
  target->get_object()[key] = json::value(rng.pick(strings));
  return true;
}

void mutate_once(json::value& doc, Rng& rng, const std::vector<std::string>& strings) {
  if (rng.below(3) == 0 && mutate_constrained_string(doc, rng, strings)) return;
  std::vector<json::value*> nodes;
  containers(doc, nodes);
  // Favour the envelope's own levels (root, _meta, error, page) where the schema says the most.
  json::value* target = nodes[rng.below(nodes.size())];
  if (rng.below(3) == 0 && doc.is_object()) {
    static const std::vector<std::string> sections = {"", "_meta", "error", "page", "_extensions"};
    const std::string& s = rng.pick(sections);
    if (s.empty()) {
      target = &doc;
    } else if (json::value* sec = doc.get_object().if_contains(s);
               sec != nullptr && sec->is_object()) {
      target = sec;
    }
  }
  auto values = interesting_values(strings, rng);
  const std::size_t op = rng.below(10);
  if (target->is_object()) {
    auto& obj = target->get_object();
    if (obj.empty() || op < 2) {
      obj[rng.pick(keys_to_add())] = rng.pick(values);  // add (or replace) a member
      return;
    }
    auto it = obj.begin() + static_cast<std::ptrdiff_t>(rng.below(obj.size()));
    if (op < 4) {
      obj.erase(it);  // drop a member
    } else if (op < 7) {
      it->value() = json::value(rng.pick(strings));  // a string of interest
    } else if (op < 8 && it->value().is_bool()) {
      it->value() = !it->value().get_bool();
    } else {
      it->value() = rng.pick(values);  // a value of another type or at a bound
    }
  } else {
    auto& arr = target->get_array();
    if (arr.empty() || op < 3) {
      arr.push_back(rng.pick(values));
    } else if (op < 5) {
      arr.erase(arr.begin() + static_cast<std::ptrdiff_t>(rng.below(arr.size())));
    } else {
      arr[rng.below(arr.size())] = rng.pick(values);
    }
  }
}

struct Options {
  fs::path fixtures, schema, node_modules, work, ajv_script;
  std::size_t count = 1000;
  std::uint64_t seed = 20261121;
};

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::string v = argv[i + 1];
    if (a == "--fixtures")
      opt.fixtures = v;
    else if (a == "--schema")
      opt.schema = v;
    else if (a == "--node-modules")
      opt.node_modules = v;
    else if (a == "--count")
      opt.count = std::stoul(v);
    else if (a == "--seed")
      opt.seed = std::stoull(v);
    else if (a == "--work")
      opt.work = v;
    else if (a == "--ajv-script")
      opt.ajv_script = v;
    else {
      std::cerr << "unknown option " << a << "\n";
      return 2;
    }
  }
  if (opt.fixtures.empty() || opt.schema.empty() || opt.node_modules.empty() ||
      opt.ajv_script.empty()) {
    std::cerr << "usage: hearth_lafs_differential --fixtures DIR --schema FILE --node-modules DIR "
                 "--ajv-script FILE\n"
                 "                                [--count N] [--seed S] [--work DIR]\n";
    return 2;
  }

  // Seeds: every fixture that is meant as an envelope, and each step of the workflow documents.
  std::vector<std::pair<std::string, json::value>> seeds;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(opt.fixtures)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto doc = json::parse_text(read_file(f));
    if (!doc.ok()) {
      std::cerr << f << ": " << doc.error().message << "\n";
      return 1;
    }
    const std::string name = fs::relative(f, opt.fixtures).generic_string();
    if (const json::value* envs = json::member(doc.value(), "envelopes");
        envs != nullptr && envs->is_array()) {
      std::size_t i = 0;
      for (const auto& step : envs->get_array()) {
        if (const json::value* env = json::member(step, "envelope")) {
          seeds.emplace_back(name + "#" + std::to_string(i++), *env);
        }
      }
    }
    seeds.emplace_back(name, doc.value());  // the document itself too (flags, workflows: invalid)
  }

  std::vector<std::pair<std::string, json::value>> docs = seeds;
  const std::vector<std::string> strings = interesting_strings();
  Rng rng(opt.seed);
  for (std::size_t i = 0; i < opt.count; ++i) {
    const auto& [name, seed] = seeds[rng.below(seeds.size())];
    json::value doc = seed;
    const std::size_t roll = rng.below(10);
    const std::size_t edits = roll < 6 ? 1 : roll < 9 ? 2 : 3;
    for (std::size_t k = 0; k < edits; ++k) mutate_once(doc, rng, strings);
    docs.emplace_back(name + " mutation " + std::to_string(i), std::move(doc));
  }

  fs::path work = opt.work.empty() ? fs::temp_directory_path() /
                                         ("hearth-lafs-diff-" + std::to_string(::getpid()))
                                   : opt.work;
  fs::create_directories(work);
  const fs::path input = work / "documents.jsonl";
  const fs::path output = work / "ajv.txt";
  {
    std::ofstream out(input);
    for (const auto& d : docs) out << json::dump(d.second) << "\n";
  }
  const fs::path& script = opt.ajv_script;
  const std::string command = "NODE_PATH='" + opt.node_modules.string() + "' node '" +
                              script.string() + "' '" + opt.schema.string() + "' '" +
                              input.string() + "' > '" + output.string() + "'";
  const int status = std::system(command.c_str());
  if (status != 0) {
    std::cerr << "ajv side failed (" << status << "): " << command << "\n";
    return 1;
  }
  std::ifstream verdicts(output);
  std::string line;
  std::size_t i = 0, disagree = 0, valid = 0, invalid = 0;
  while (std::getline(verdicts, line)) {
    if (i >= docs.size()) break;
    const bool ajv_valid = line == "1";
    const auto errors = lafs::validate_envelope_schema(docs[i].second);
    const bool hearth_valid = errors.empty();
    const bool fast = lafs::envelope_schema_valid(docs[i].second);
    (ajv_valid ? valid : invalid)++;
    if (ajv_valid != hearth_valid || fast != hearth_valid) {
      ++disagree;
      std::cout << "DISAGREE " << docs[i].first << ": ajv "
                << (ajv_valid ? "valid" : line.substr(2)) << "; hearth "
                << (hearth_valid ? "valid" : errors.front().to_string())
                << (fast != hearth_valid ? " (fast path differs)" : "") << "\n  "
                << json::dump(docs[i].second) << "\n";
    }
    ++i;
  }
  if (i != docs.size()) {
    std::cerr << "ajv answered " << i << " of " << docs.size() << " documents\n";
    return 1;
  }
  std::cout << "differential: " << docs.size() << " documents (" << seeds.size()
            << " fixture documents, " << opt.count << " mutations, seed " << opt.seed
            << "): ajv valid " << valid << ", invalid " << invalid << "; " << disagree
            << " disagreements\n";
  fs::remove_all(work);
  // Both verdicts must be well represented, or agreeing would prove little.
  const bool balanced = valid * 5 >= docs.size() && invalid * 5 >= docs.size();
  if (!balanced) std::cout << "the mutations are lopsided: fewer than 20% valid or invalid\n";
  return disagree == 0 && balanced ? 0 : 1;
}
