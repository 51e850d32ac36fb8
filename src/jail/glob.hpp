#pragma once
/// fileAccess glob patterns (lavs-spec-v1 4.6, 6.2), matched against paths relative to the service
/// folder. Syntax: `*` any run of characters within one path segment, `**` any number of whole
/// segments (zero included), `?` one character, `[abc]` / `[a-z]` / `[!a-z]` (or `[^...]`) one
/// character of a class, a leading `!` negates the pattern, a leading `./` is ignored and a
/// trailing `/` means everything below that folder.
/// A path is allowed when at least one plain pattern matches it and it is not excluded. A path is
/// excluded when it, or any folder above it inside the service folder, matches a negated pattern
/// (a negation always wins, whatever the order): `!data/secret` excludes `data/secret` and
/// everything beneath it, `!data/secret/**` too. The jail applies the same rule (it covers each
/// existing match, and the folder it is in cannot be renamed; see jail.hpp), so that what a
/// handler cannot reach, lavs/readFile and ctx.readFile do not serve either.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::jail {

/// True when `path` (relative, '/'-separated, already normalised: no '.', '..' or empty segment)
/// matches `pattern` (without its '!' prefix).
bool glob_match(std::string_view pattern, std::string_view path);

class GlobSet {
 public:
  GlobSet() = default;
  explicit GlobSet(const std::vector<std::string>& patterns);

  /// See the file comment for the rule: included, and not excluded().
  bool allows(std::string_view relative_path) const;
  /// True when `relative_path` (relative to the service folder, '/'-separated, normalised) or one
  /// of the folders above it matches a negated pattern. For callers that walk or open paths
  /// segment by segment: a folder that is excluded() excludes everything beneath it.
  bool excluded(std::string_view relative_path) const;
  bool empty() const { return include_.empty(); }

 private:
  std::vector<std::string> include_;
  std::vector<std::string> exclude_;
};

/// The checks hearth makes before it reads or writes a file on a handler's behalf (lavs/readFile,
/// ctx.readFile / ctx.writeFile), in two steps around following symbolic links.
enum class PathVerdict { kAllowed, kOutside, kNotCovered };

/// Step 1, on the path as written: `requested` (relative to `dir`, or absolute inside it) made
/// relative and normalised, and whether `globs` allow it. `rel` is set for every verdict but
/// kOutside.
PathVerdict check_requested_path(const std::filesystem::path& dir, const GlobSet& globs,
                                 std::string_view requested, std::filesystem::path& rel);

/// Step 2, once links are followed: the real path must still lie in `dir` (canonical) and be
/// allowed, or a link leads out.
bool real_path_allowed(const std::filesystem::path& dir, const GlobSet& globs,
                       const std::filesystem::path& real);

}  // namespace hearth::jail
