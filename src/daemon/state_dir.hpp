#pragma once
/// The daemon's state folder: where it is, and the private files written into it.

#include <filesystem>
#include <string>

namespace hearth::daemon {

/// `--state-dir` default: $XDG_STATE_HOME/hearth, else ~/.local/state/hearth.
std::filesystem::path default_state_dir();

/// Creates `dir` (and parents) with mode 0700 for what hearth creates.
bool ensure_private_dir(const std::filesystem::path& dir, std::string& error);

/// Writes `content` to `file` with mode 0600, atomically (common/atomic_file: a temporary file
/// beside it, fsynced, renamed over it), so that a reader never sees half a token or ready file.
bool write_private_file(const std::filesystem::path& file, const std::string& content,
                        std::string& error);

}  // namespace hearth::daemon
