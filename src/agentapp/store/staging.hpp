#pragma once
/// Bringing a package into hearth's state dir before anything reads it: a folder is copied, a
/// .tar.gz archive is extracted, and either way only plain files and folders arrive, below the
/// staging folder, within limits (docs/agent-apps.md, "Installing"). What is refused: absolute
/// names, `..`, links that leave the package (a link to a file inside it is copied as that
/// file), links in archives, devices, FIFOs and sockets, and trees past the limits. `.git` and
/// `node_modules` are not copied: the package hash does not cover them, so nothing installed may
/// come from them.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/fd.hpp"
#include "common/result.hpp"

namespace hearth::agentapp {

struct StageLimits {
  std::size_t max_files = 10000;
  std::uint64_t max_total_bytes = std::uint64_t{256} << 20;
  std::uint64_t max_file_bytes = std::uint64_t{64} << 20;
  std::size_t max_depth = 32;
  std::size_t max_path = 1024;
};

/// Copies the package folder `source` into `dest` (which must not exist). Returns the staged
/// package root (`dest`).
Result<std::filesystem::path> stage_folder(const std::filesystem::path& source,
                                           const std::filesystem::path& dest,
                                           const StageLimits& limits = {});

/// Extracts the gzip-compressed tar archive `archive` into `dest` (which must not exist).
/// Returns the package root: `dest`, or its one folder when the archive holds a single
/// top-level folder with the APP.md in it.
Result<std::filesystem::path> stage_archive(const std::filesystem::path& archive,
                                            const std::filesystem::path& dest,
                                            const StageLimits& limits = {});

/// A folder of the staging area that this process holds (docs/agent-apps.md, "Installing"):
/// `<staging>/<id>/` with its lock file `<staging>/<id>.lock` beside it. The lock file is made
/// and locked (flock) before the folder exists and unlinked after the folder is gone, so a
/// folder whose lock file is missing or unlocked belongs to no living stager: a killed install
/// leaves both behind with the lock released (the kernel drops it with the process), and
/// remove_stale_staging takes them away. The object removes its folder and lock file when it
/// goes.
class StagingEntry {
 public:
  StagingEntry() = default;
  /// A new entry below the folder `staging` (which must exist), locked.
  static Result<StagingEntry> create(const std::filesystem::path& staging);
  StagingEntry(StagingEntry&& other) noexcept;
  StagingEntry& operator=(StagingEntry&& other) noexcept;
  StagingEntry(const StagingEntry&) = delete;
  StagingEntry& operator=(const StagingEntry&) = delete;
  ~StagingEntry() { release(); }

  /// The entry's folder; empty for a default-constructed entry.
  const std::filesystem::path& path() const { return dir_; }

 private:
  void release();
  std::filesystem::path dir_;
  std::filesystem::path lock_;
  Fd lock_fd_;
};

/// Removes what stagers that are gone left in `staging`: every `<id>.lock` this call can lock
/// (with its folder), every folder without a lock file (left by a hearth before the lock files,
/// or by a stager killed while it removed its own entry), and anything else that is not a lock
/// file. An entry whose lock is held (an install running in another process, or in this one) is
/// left alone. No link is followed: a link is removed as a link. Returns the names removed.
std::vector<std::string> remove_stale_staging(const std::filesystem::path& staging);

/// Removes `path` and everything below it without following a symbolic link anywhere (a link is
/// removed, never what it points at); read-only folders are made writable through their own
/// descriptors on the way. A missing `path` is not an error.
Status remove_tree_nofollow(const std::filesystem::path& path);

}  // namespace hearth::agentapp
