#pragma once
/// Test helpers: where the LAFS conformance material is (../shared beside the clone, as in CI),
/// and reading JSON files.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::lafs::testing {

/// JSON text a test knows to be valid, as a value.
inline json::value parse(std::string_view text) {
  return json::parse_text(text).value();
}

/// The LAFS code an error carries in its data (data.lafs.code).
inline std::string lafs_code(const Error& e) {
  return std::string(e.data.at("lafs").at("code").as_string());
}

/// $HEARTH_SOURCE_DIR/../shared/conformance/lafs (the source tree's when the variable is unset).
inline std::filesystem::path conformance_dir() {
  const char* src = std::getenv("HEARTH_SOURCE_DIR");
  std::filesystem::path root = src != nullptr ? src : HEARTH_TEST_SOURCE_DIR;
  return root / ".." / "shared" / "conformance" / "lafs";
}

inline std::filesystem::path fixture(const std::string& name) {
  return conformance_dir() / "fixtures" / name;
}

inline json::value read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  auto parsed = json::parse_text(ss.str());
  if (!parsed.ok()) throw std::runtime_error(path.string() + ": " + parsed.error().message);
  return std::move(parsed).value();
}

/// A schema-valid success envelope to start tests from.
inline json::value sample_envelope() {
  auto parsed = json::parse_text(R"({
    "$schema": "https://lafs.dev/schemas/v1/envelope.schema.json",
    "_meta": {"specVersion": "1.0.0", "schemaVersion": "1.0.0", "timestamp": "2026-02-11T00:00:00Z",
              "operation": "example.list", "requestId": "req_01", "transport": "http", "strict": true,
              "mvi": "standard", "contextVersion": 0},
    "success": true,
    "result": {"items": [{"id": "a1", "title": "Item A"}]}
  })");
  return std::move(parsed).value();
}

}  // namespace hearth::lafs::testing
