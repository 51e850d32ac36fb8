// hearth-lafs-bench: envelope validation throughput of src/lafs on the LAFS fixtures (every
// envelope fixture and every step of the workflow fixtures), for comparison with ajv
// (bench/lafs_ajv_bench.cjs, same documents, same loop). Documents are parsed once; the loop
// times validation alone, collecting every error (as ajv does with allErrors).
// Usage: hearth-lafs-bench FIXTURES_DIR [SECONDS]   prints one JSON line.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "json/json.hpp"
#include "lafs/conformance.hpp"
#include "lafs/validate.hpp"

namespace fs = std::filesystem;
using namespace hearth;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: hearth-lafs-bench FIXTURES_DIR [SECONDS]\n";
    return 2;
  }
  const double seconds = argc > 2 ? std::stod(argv[2]) : 3.0;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(argv[1])) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<json::value> docs;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    auto doc = json::parse_text(ss.str());
    if (!doc.ok()) return 1;
    switch (lafs::classify(doc.value())) {
      case lafs::DocumentKind::kEnvelope:
        docs.push_back(doc.value());
        break;
      case lafs::DocumentKind::kWorkflow:
        for (const auto& step : doc.value().at("envelopes").as_array())
          docs.push_back(step.at("envelope"));
        break;
      case lafs::DocumentKind::kFlags:
        break;
    }
  }
  std::size_t valid = 0;
  for (const auto& d : docs) valid += lafs::validate_envelope_schema(d).empty() ? 1 : 0;

  using clock = std::chrono::steady_clock;
  std::size_t validations = 0, errors = 0;
  const auto start = clock::now();
  const auto stop = start + std::chrono::duration<double>(seconds);
  while (clock::now() < stop) {
    for (int round = 0; round < 100; ++round) {
      for (const auto& d : docs) errors += lafs::validate_envelope_schema(d).size();
      validations += docs.size();
    }
  }
  const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  std::cout << "{\"validator\":\"hearth\",\"documents\":" << docs.size() << ",\"valid\":" << valid
            << ",\"validations\":" << validations << ",\"seconds\":" << elapsed
            << ",\"perSecond\":" << static_cast<long long>(validations / elapsed)
            << ",\"errors\":" << errors << "}\n";
  return 0;
}
