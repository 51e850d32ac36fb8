#pragma once
/// `hearth registry import`: an OpenAPI 3.0 or 3.1 document turned into a sealed A2S definition
/// (docs/a2s.md, "OpenAPI import"): operations to capabilities, parameters and request bodies to
/// variables, security schemes to authentications and service variables.

#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::a2s {

struct ImportOptions {
  std::string server_url;    ///< which servers[] entry to use; empty: the first
  std::string service_name;  ///< serviceName; empty: from info.title
};

struct ImportResult {
  json::value definition;             ///< sealed; parse_definition accepts it
  std::vector<std::string> warnings;  ///< what was left out or changed, and why
};

/// kInvalidParams when the document is not OpenAPI 3 (Swagger 2.0 is named as such), has no
/// usable server, or yields no operation.
Result<ImportResult> import_openapi(const json::value& openapi, const ImportOptions& options);

}  // namespace hearth::a2s
