#pragma once
/// The files of an installed package, as recorded at install and as they are now
/// (docs/agent-apps.md, "The integrity check"): every path below the package with what it is -
/// a plain file with its SHA-256, a folder, or (never at install) a symbolic link or another
/// kind of file. Nothing is followed: a link is seen as a link, wherever it leads. Comparing
/// two readings names each path that changed, was added or removed, or changed its kind.

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::agentapp {

struct TreeEntry {
  enum class Kind { kFile, kFolder, kLink, kOther };
  Kind kind = Kind::kFile;
  std::string sha256;  ///< lowercase hex, for a file
  std::string error;   ///< a file that could not be read: why
};

/// By path relative to the package, with '/' between folders.
using PackageTree = std::map<std::string, TreeEntry>;

/// A package holds at most 10,000 files (StageLimits); a tree past this many entries was not
/// installed by hearth and is not read further.
inline constexpr std::size_t kMaxTreeEntries = 50000;

/// Reads the tree below `root` (opened with O_NOFOLLOW: a root that is a link is an error, as is
/// a missing one) and hashes every plain file. A tree deeper than 64 folders or past
/// kMaxTreeEntries is an error.
Result<PackageTree> read_package_tree(const std::filesystem::path& root);

/// {path: "sha256:<hex>" | "folder" | "link" | "other"}, as the store keeps it.
json::object tree_to_json(const PackageTree& tree);
Result<PackageTree> tree_from_json(const json::value& value);

/// What differs between the tree recorded at install and the tree now, one line a path,
/// in path order: "services/backend.py changed since install", "x.js was added since install",
/// "dist/ui/index.html was removed since install", "services/run.py is a symbolic link now (a
/// file at install)". Empty when they are the same.
std::vector<std::string> tree_changes(const PackageTree& recorded, const PackageTree& now);

}  // namespace hearth::agentapp
