#pragma once
/// hearth's own reading of a package's APP.md for installing it: the front matter with a real
/// YAML parser (json/yaml.hpp), and the identity fields checked as the format's manifest schema
/// states them. The reference-compatible reading (package/reference.hpp) stays for the
/// `hearth app validate ...` commands.

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

struct AppManifest {
  json::object front_matter;
  std::string name;
  std::string version;
  std::string status;
  std::string app_type;
  std::string manifest_version;  ///< empty when not given
  std::string publisher_id;      ///< publisher.publisherId, empty when not given
};

/// Reads `<package>/APP.md`. Every problem found is listed in the error's message, one per line.
Result<AppManifest> read_manifest(const std::filesystem::path& package);

/// Every capability the manifest declares, without repeats, in the order met:
/// `requires.capabilities` (a list, or a map's keys), top-level `capabilities` (a list), then
/// each entry's and each service's `requiredCapabilities`.
std::vector<std::string> declared_capabilities(const json::object& front_matter);

/// The operations the app declares (the format's operations contract: {key, type, sideEffect,
/// approvalRequired, dryRunRequired, evidenceRequired, autoExecute, ...}): the front matter's
/// `operations` (a list, or an object holding the list as the manifest schema has it), else the
/// list in the package's app.operations.yaml; empty when neither holds one. Items that are not
/// objects with a key are left out.
json::array operations_of(const json::object& front_matter, const std::filesystem::path& package);

/// Top-level front-matter keys the package format does not define (its manifest schema's
/// properties): one message each, naming the closest defined key ("unknown front-matter key
/// 'premissions'; did you mean 'permissions'?"). The format allows other keys, so these are
/// warnings: a misspelt key would otherwise read as "not declared".
std::vector<std::string> unknown_front_matter_keys(const json::object& front_matter);

/// An app name as the format allows it: `^[a-z0-9][a-z0-9-_.]*$`, 1-64 characters.
bool valid_app_name(std::string_view name);

}  // namespace hearth::agentapp
