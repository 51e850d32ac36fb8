#pragma once
/// Atomic file replacement: the one way hearth writes a file, for itself (token, ready file) and
/// on a handler's behalf (ctx.writeFile in the JS worker).
///
/// The data goes to a hidden temporary file in the target's folder (`.<name>.hearth-tmp-<random>`,
/// created O_EXCL|O_NOFOLLOW), which is written whole, fsynced, renamed over the target, and the
/// folder is fsynced. A process killed at any moment, or a full disk, leaves either the old
/// content or the new one, never a mix; on any failure the temporary file is removed.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>

#include "common/result.hpp"

namespace hearth {

struct AtomicWriteOptions {
  /// The new file's permission bits. Absent: the target's current bits when it exists, else
  /// 0666 less the umask (what open(2) would give a new file).
  std::optional<mode_t> mode;
};

/// Replaces `path` (a file name in an existing folder; a symbolic link at `path` itself is
/// replaced, never followed) with `data`. Errors are -32603 with data {"path", "errno",
/// "errnoValue"}, errno being the symbolic name (`ENOSPC`, `EDQUOT`, `EFBIG`, `EACCES`, ...); a
/// full disk (ENOSPC, EDQUOT, EFBIG) says so, and that the old content is intact.
Status write_file_atomic(const std::filesystem::path& path, std::string_view data,
                         const AtomicWriteOptions& options = {});

/// The errno value a write_file_atomic error came from (EIO when it has none).
int atomic_write_errno(const Error& error);

/// True for the errno values of a full disk or an exceeded size limit.
bool is_disk_full_errno(int err);

/// The symbolic name of an errno value ("ENOSPC"), or "EIO" for ones not listed.
const char* errno_name(int err);

/// The prefix of every temporary file write_file_atomic makes: `.<name>.hearth-tmp-`.
inline constexpr std::string_view kAtomicTempMarker = ".hearth-tmp-";

}  // namespace hearth
