#pragma once
/// The JSONPath subset of `responseMapping` (docs/a2s.md, "Response mapping"): `$`, then any
/// number of `.name`, `['name']` / `["name"]` and `[index]` steps. No wildcards, filters or
/// recursive descent: a mapping names one value.

#include <string_view>

#include "json/json.hpp"

namespace hearth::a2s {

/// Whether `path` is in the subset.
bool valid_path(std::string_view path);

/// The value `path` names in `root`, or nullptr when there is none (or the path is invalid).
const json::value* select(const json::value& root, std::string_view path);

}  // namespace hearth::a2s
