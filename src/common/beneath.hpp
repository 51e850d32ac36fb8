#pragma once
/// Opening a file on someone's behalf inside a folder, without a check-then-open race: the path
/// is resolved relative to an open descriptor of the folder, no symbolic link is followed (in any
/// component) and no component may leave the folder, so a handler that swaps a folder for a link
/// between a check and the open gains nothing. The caller checks the opened descriptor (fstat).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.hpp"
#include "common/result.hpp"

namespace hearth {

/// Why open_beneath failed: `error` is the errno; `link` is true when a symbolic link (or a
/// component leaving the folder) was met, which callers report as a refusal, not a missing file.
struct BeneathFailure {
  int error = 0;
  bool link = false;
};

/// Opens `rel` (relative, normalised, no "..") below `dir` with `flags` (O_CLOEXEC and O_NOFOLLOW
/// are added), never following a symbolic link. Uses openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) where the kernel has it, else walks the
/// components with openat(O_NOFOLLOW).
Fd open_beneath(const std::filesystem::path& dir, const std::filesystem::path& rel, int flags,
                BeneathFailure& failure);

/// Whether `path` may be opened below a folder as it is: relative, no "", "." or ".." part, no
/// backslash or NUL (a request path, a manifest path).
bool is_clean_relative(std::string_view path);

/// The content of the regular file `rel` below `dir` (open_beneath: no link followed), when it
/// is at most `limit` bytes; nullopt otherwise (missing, not a regular file, a link, too large,
/// unreadable).
std::optional<std::string> read_beneath(const std::filesystem::path& dir,
                                        const std::filesystem::path& rel, std::size_t limit);

/// The names in the open folder `dir` (without "." and ".."), read through a descriptor of its
/// own from the folder's start, so `dir`'s offset does not matter; nullopt with errno set when it
/// cannot be read.
std::optional<std::vector<std::string>> names_in_folder(int dir);

}  // namespace hearth
