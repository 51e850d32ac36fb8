#pragma once
/// The reference CLI's own YAML reader, reproduced: the Agent App format's reference tool reads
/// the front matter of APP.md and the layered `app.*.yaml` files with a line-based subset of
/// YAML that reads some documents differently from YAML (docs/agent-apps.md, "Reference
/// compatibility", lists each difference). hearth's reference-compatible commands must see what
/// it sees; hearth's own install path reads packages with a real YAML parser instead.

#include <string_view>

#include "json/json.hpp"

namespace hearth::agentapp {

/// What the reference CLI's parser returns for `source`: always an object. Numbers are doubles;
/// key order is the order of first assignment (a repeated key keeps its first place).
json::object parse_yaml_subset(std::string_view source);

/// The front matter text of APP.md as the reference CLI finds it: the file must begin with
/// "---\n", and the front matter ends at the first following "\n---". nullopt when there is none
/// (which the CLI reads as an empty object). `content` is already decoded (jsv::decode_utf8).
std::optional<std::string_view> front_matter(std::string_view content);

/// The scalar rule of that parser (quotes removed, then true/false/null, numbers, inline lists).
json::value parse_subset_scalar(std::string_view text);

}  // namespace hearth::agentapp
