#pragma once
/// YAML documents as JSON values: what hearth reads in YAML (A2S definitions, workspace files)
/// is checked as JSON afterwards.

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::json {

/// YAML text (JSON is YAML) to JSON, one document. YAML features JSON cannot hold (anchors are
/// expanded, within limits that stop alias bombs; non-string keys, tags and binary are refused)
/// give an error naming the line.
Result<value> yaml_to_json(std::string_view text);

/// JSON to block-style YAML that yaml_to_json reads back to the same value.
std::string json_to_yaml(const value& value);

}  // namespace hearth::json
