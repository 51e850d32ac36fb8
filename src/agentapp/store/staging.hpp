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

}  // namespace hearth::agentapp
