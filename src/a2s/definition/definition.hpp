#pragma once
/// Reading A2S service definitions (YAML or JSON) into the model of a2s/model.hpp, with every
/// problem named by its path, and their checksum (docs/a2s.md, "Checksum").

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2s/model.hpp"
#include "common/problem.hpp"
#include "common/result.hpp"
#include "json/yaml.hpp"

namespace hearth::a2s {

using json::json_to_yaml;  // json/yaml.hpp
using json::yaml_to_json;

/// The canonical form the checksum covers: `document` without its top-level `checksum`, as
/// compact JSON with object keys sorted by their UTF-8 bytes (docs/a2s.md, "Checksum").
std::string canonical_form(const json::value& document);

/// The lowercase hex SHA-256 over the canonical form of `document` without its `checksum`
/// member (docs/a2s.md, "Checksum").
std::string checksum_of(const json::value& document);

/// `document` with its `checksum` member set to checksum_of(document), placed after `version`.
json::value seal(const json::value& document);

/// Validates a definition document and builds the model. Every problem is appended to
/// `problems` with its path ("capabilities[1].tempVariables.DATE.format: ..."); a checksum that
/// does not match is one of them. Returns nullopt when there was any problem.
std::optional<Definition> parse_definition(const json::value& document, Problems& problems);

/// A definition file that could not be loaded, with every problem.
struct LoadFailure {
  std::filesystem::path file;
  Problems problems;
};

struct LoadResult {
  std::vector<std::shared_ptr<const Definition>> definitions;  ///< sorted by file name
  std::vector<LoadFailure> failures;
};

/// Loads one file (.yaml, .yml or .json).
Result<std::shared_ptr<const Definition>> load_file(const std::filesystem::path& file,
                                                    Problems& problems);

/// Loads every .yaml, .yml and .json file directly in `dir` (and in its sub-folders); one bad
/// file does not stop the others. Two definitions with the same serviceName: the second fails.
LoadResult load_directory(const std::filesystem::path& dir);

}  // namespace hearth::a2s
