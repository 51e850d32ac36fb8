#pragma once
/// Versions and version ranges as Agent App manifests write them (`requires.capabilities`,
/// `requires.lime`, `requires.sdk`): npm-style ranges over `MAJOR.MINOR.PATCH`. A range is one
/// or more sets joined by `||`; a set is comparators separated by spaces, all of which must hold:
/// `1.2.3` or `=1.2.3`, `>`, `>=`, `<`, `<=`, `^1.2` (same major, or same minor below 1.0),
/// `~1.2` (same minor), `1.x` / `1.2.*` / `*` / empty (any), and `1.2.3 - 2.0.0`. Missing parts
/// count as 0 (as lower bounds) or as wildcards (`1` is `1.x`). Pre-release tags are not read.

#include <array>
#include <optional>
#include <string_view>

namespace hearth::agentapp {

using Version = std::array<long, 3>;

/// "1.2.3" (a leading `v` allowed); nullopt when it is not one.
std::optional<Version> parse_version(std::string_view text);

/// Whether `version` is in `range`; nullopt when the range cannot be read.
std::optional<bool> satisfies(const Version& version, std::string_view range);

}  // namespace hearth::agentapp
