#pragma once
/// fileAccess glob patterns (lavs-spec-v1 4.6, 6.2), matched against paths relative to the service
/// folder. Syntax: `*` any run of characters within one path segment, `**` any number of whole
/// segments (zero included), `?` one character, `[abc]` / `[a-z]` / `[!a-z]` (or `[^...]`) one
/// character of a class, a leading `!` negates the pattern, a leading `./` is ignored and a
/// trailing `/` means everything below that folder.
/// A path is allowed when at least one plain pattern matches it and no negated pattern does
/// (a negation always wins, whatever the order).

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

  /// See the file comment for the rule.
  bool allows(std::string_view relative_path) const;
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
