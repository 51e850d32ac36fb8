#pragma once
/// The A2S service definition model (../shared/specs/a2s-protocol.md, docs/a2s.md): what a
/// definition file says once it has been parsed and validated. Parsing is a2s/definition.hpp;
/// everything else (search, templates, execution, the OpenAPI import) reads these types only.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json/json.hpp"
#include "schema/schema.hpp"

namespace hearth::a2s {

/// A variable's data type. `date` is a string in ISO 8601 form (YYYY-MM-DD, or a date-time).
enum class VarType { kString, kNumber, kInteger, kBoolean, kDate, kObject, kArray };

/// Where a variable's value lives: the vault under the service's domain (`DOMAIN::NAME`), the
/// vault's global scope behind a trust grant (`global::NAME`), or only the one request.
enum class Storage { kService, kGlobal, kTemporary };

struct Variable {
  std::string name;  ///< as written, e.g. "API_KEY"
  VarType type = VarType::kString;
  std::string description;
  Storage storage = Storage::kTemporary;
  bool optional = false;
  std::optional<std::int64_t> expiry_seconds;  ///< a stored value's lifetime
  std::optional<std::string> pattern;          ///< RE2 syntax, matched against the whole text
  std::optional<std::string> format;           ///< "date", "date-time", "email", "uri", ...
  std::optional<double> min;                   ///< numbers: the value; strings: the length
  std::optional<double> max;
  std::optional<json::value> default_value;
};

/// Variables in the order the definition lists them.
using Variables = std::vector<Variable>;

/// `responseMapping`: JSONPath (docs/a2s.md, "Response mapping") to the variable it sets, in
/// the order written.
using ResponseMapping = std::vector<std::pair<std::string, std::string>>;

struct Authentication {
  std::string type;  ///< "oauth2", "oauth2_refresh", "api_key", "basic", ... as written
  std::string description;
  Variables input;
  Variables output;
  std::string request;  ///< the raw HTTP request template
  ResponseMapping response_mapping;
};

struct Capability {
  std::string name;
  std::string description;
  std::vector<std::string> required_scopes;
  Variables input;   ///< service and global variables
  Variables temp;    ///< per-request variables (never stored)
  Variables output;  ///< set from the response through response_mapping
  std::string request;
  std::string response_schema;  ///< a reference into responseSchemas, e.g. "#/responseSchemas/X"
  ResponseMapping response_mapping;
  json::value examples;  ///< null when absent
};

struct ErrorPattern {
  int status_code = 0;
  std::string pattern;  ///< RE2, searched in the response body
  std::string resolution;
  bool retry = false;
  std::optional<double> retry_after_seconds;
};

/// `rateLimits` (or `security.rateLimits`): at most `requests` requests per `period_seconds`
/// to the domain, with bursts up to `burst` (default: `requests`).
struct RateLimit {
  double requests = 0;
  double period_seconds = 60;
  double burst = 0;
};

/// A `responseSchemas` entry, compiled.
struct ResponseSchema {
  std::vector<int> status_codes;
  std::string format;  ///< e.g. "application/json"
  std::shared_ptr<const schema::Schema> schema;
  std::vector<std::string> required;  ///< top-level fields a response must have
};

struct Definition {
  std::string service_name;
  std::string service_description;
  std::string domain;  ///< host name, optionally with ":port"
  std::string version;
  std::string checksum;  ///< lowercase hex SHA-256 as written
  std::vector<Authentication> authentications;
  std::vector<Capability> capabilities;
  std::vector<ErrorPattern> error_patterns;
  std::optional<RateLimit> rate_limit;
  json::value response_schemas;                            ///< object, or null when absent
  std::map<std::string, ResponseSchema> compiled_schemas;  ///< responseSchemas by name
  json::value security;  ///< object as written; null when absent (the defaults apply)
  json::value document;  ///< the whole definition as JSON (what the checksum covers)
  std::string source;    ///< the file it came from, for messages
  /// What loads but should be put right (`registry check` prints them; the daemon logs them):
  /// a missing `security` (its defaults apply), a checksum that is a placeholder.
  Problems warnings;
};

}  // namespace hearth::a2s
