#pragma once
/// Format and field flags (spec sections 5 and 9.2): `--json` / `--human` resolve the output
/// format by precedence (explicit flag, project config, user config, the protocol default json);
/// both at once is E_FORMAT_CONFLICT; `--field` with `--fields` is E_FIELD_CONFLICT.

#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::lafs {

enum class Format { kJson, kHuman };
std::string_view to_string(Format f);

/// Flag inputs, as the conformance fixtures spell them ({"jsonFlag", "humanFlag", ...}).
struct FlagInput {
  bool json_flag = false;
  bool human_flag = false;
  bool quiet = false;
  std::optional<Format> requested_format;
  std::optional<Format> project_default;
  std::optional<Format> user_default;
};

struct FlagResolution {
  enum class Source { kFlag, kProject, kUser, kDefault };
  Format format = Format::kJson;
  Source source = Source::kDefault;
  bool quiet = false;
};
std::string_view to_string(FlagResolution::Source s);

/// Reads a flag-input document; E_VALIDATION_SCHEMA when a member has the wrong type.
Result<FlagInput> parse_flag_input(const json::value& doc);

/// Resolves the format; E_FORMAT_CONFLICT (as -32602) when both --human and --json are set.
Result<FlagResolution> resolve_format(const FlagInput& input);

/// `--field NAME` (one value, no envelope) against `--fields a,b` (a filtered envelope).
struct FieldSelection {
  std::optional<std::string> field;
  std::vector<std::string> fields;
};
/// E_FIELD_CONFLICT when both are given; `fields` is split at commas and trimmed.
Result<FieldSelection> resolve_field_flags(const std::optional<std::string>& field,
                                           const std::optional<std::string>& fields);

}  // namespace hearth::lafs
