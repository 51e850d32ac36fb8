#include "agentapp/store/staging.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/beneath.hpp"
#include "common/fd.hpp"
#include "common/random.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

Error refused(std::string message) {
  return Error::make(ErrorCode::kInvalidParams, std::move(message));
}

/// What has been staged so far, against the limits.
struct Budget {
  const StageLimits& limits;
  std::size_t files = 0;
  std::uint64_t bytes = 0;

  Status add_file(const std::string& name) {
    if (++files > limits.max_files) {
      return refused("the package has more than " + std::to_string(limits.max_files) +
                     " files (at " + name + ")");
    }
    return {};
  }
  Status add_bytes(const std::string& name, std::uint64_t file_bytes, std::uint64_t n) {
    if (file_bytes > limits.max_file_bytes) {
      return refused(name + " is larger than " + std::to_string(limits.max_file_bytes) + " bytes");
    }
    bytes += n;
    if (bytes > limits.max_total_bytes) {
      return refused("the package is larger than " + std::to_string(limits.max_total_bytes) +
                     " bytes (at " + name + ")");
    }
    return {};
  }
};

/// A relative name from an archive or a walk, checked: no absolute path, no `..`, no empty or
/// `.` parts after normalising, within the depth and length limits. Returns its parts.
Result<std::vector<std::string>> checked_parts(std::string_view name, const StageLimits& limits) {
  if (name.size() > limits.max_path) {
    return refused("a name longer than the limit: " + std::string(name.substr(0, 80)) + "...");
  }
  if (!name.empty() && name.front() == '/') {
    return refused("an absolute name: " + std::string(name));
  }
  if (name.find('\0') != std::string_view::npos) return refused("a name with a NUL byte");
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto slash = name.find('/', start);
    const auto part = name.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (part == "..") return refused("a name that leaves the package: " + std::string(name));
    if (!part.empty() && part != ".") parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > limits.max_depth) {
    return refused("a name nested too deep: " + std::string(name));
  }
  return parts;
}

bool skipped(const std::vector<std::string>& parts) {
  for (const auto& p : parts) {
    if (p == ".git" || p == "node_modules") return true;
  }
  return false;
}

/// Creates the folders of `parts` (all but the last when `last_is_file`) below `root`; returns
/// the folder's descriptor. Each step is opened with O_NOFOLLOW below the previous one, and only
/// this code creates entries in the staging tree, so nothing there is a link.
Result<Fd> open_folders(const fs::path& root, const std::vector<std::string>& parts,
                        bool last_is_file) {
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dir) return refused("cannot open the staging folder: " + std::string(std::strerror(errno)));
  const std::size_t n = last_is_file ? parts.size() - 1 : parts.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (::mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      return refused("cannot create folder " + parts[i] + ": " + std::strerror(errno));
    }
    Fd next(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (!next) return refused("'" + parts[i] + "' is both a file and a folder in the package");
    dir = std::move(next);
  }
  return dir;
}

Result<Fd> create_file(const fs::path& root, const std::vector<std::string>& parts,
                       const std::string& name) {
  HEARTH_ASSIGN_OR_RETURN(Fd dir, open_folders(root, parts, true));
  Fd out(::openat(dir.get(), parts.back().c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!out) return refused("cannot create " + name + ": " + std::strerror(errno));
  return out;
}

Status write_all(int fd, const char* data, std::size_t n, const std::string& name) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return refused("cannot write " + name + ": " + std::strerror(errno));
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return {};
}

/// Copies the plain file `from`; `follow` only for a link already checked to stay inside.
Status copy_file(const fs::path& from, const fs::path& root, const std::vector<std::string>& parts,
                 const std::string& name, Budget& budget, bool follow) {
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW)));
  struct stat st {};
  if (!in || ::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return refused(name + " is not a plain file");
  }
  if (auto r = budget.add_file(name); !r.ok()) return r;
  HEARTH_ASSIGN_OR_RETURN(Fd out, create_file(root, parts, name));
  std::vector<char> buf(65536);
  std::uint64_t copied = 0;
  while (true) {
    const ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refused("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    copied += static_cast<std::uint64_t>(n);
    if (auto r = budget.add_bytes(name, copied, static_cast<std::uint64_t>(n)); !r.ok()) return r;
    if (auto r = write_all(out.get(), buf.data(), static_cast<std::size_t>(n), name); !r.ok()) {
      return r;
    }
  }
  return {};
}

Status walk(const fs::path& source_root, const fs::path& dir, const std::string& rel,
            const fs::path& dest, Budget& budget) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
  if (ec) return refused("cannot read folder " + (rel.empty() ? "." : rel) + ": " + ec.message());
  for (const auto& entry : entries) {
    const std::string name = entry.path().filename().string();
    std::string rel_name = rel;
    if (!rel_name.empty()) rel_name += '/';
    rel_name += name;
    HEARTH_ASSIGN_OR_RETURN(auto parts, checked_parts(rel_name, budget.limits));
    if (skipped(parts)) continue;
    const auto status = entry.symlink_status(ec);
    if (fs::is_symlink(status)) {
      // Only a link to a plain file inside the package, copied as that file.
      const auto target = fs::weakly_canonical(entry.path(), ec);
      const auto root = fs::weakly_canonical(source_root, ec);
      const auto rel_target = target.lexically_relative(root);
      if (ec || rel_target.empty() || *rel_target.begin() == ".." ||
          !fs::is_regular_file(target, ec)) {
        return refused(rel_name +
                       " is a link that leaves the package or does not lead to a "
                       "plain file in it");
      }
      if (auto r = copy_file(target, dest, parts, rel_name, budget, true); !r.ok()) return r;
    } else if (fs::is_directory(status)) {
      HEARTH_ASSIGN_OR_RETURN(Fd made, open_folders(dest, parts, false));
      if (auto r = walk(source_root, entry.path(), rel_name, dest, budget); !r.ok()) return r;
    } else if (fs::is_regular_file(status)) {
      if (auto r = copy_file(entry.path(), dest, parts, rel_name, budget, false); !r.ok()) {
        return r;
      }
    } else {
      return refused(rel_name + " is a device, FIFO or socket: a package holds plain files only");
    }
  }
  return {};
}

Status make_dest(const fs::path& dest) {
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (::mkdir(dest.c_str(), 0755) != 0) {
    return refused("cannot create " + dest.string() + ": " + std::strerror(errno));
  }
  return {};
}

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};

}  // namespace

Result<fs::path> stage_folder(const fs::path& source, const fs::path& dest,
                              const StageLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return refused(source.string() + " is not a folder");
  if (auto r = make_dest(dest); !r.ok()) return std::move(r).error();
  Budget budget{limits};
  if (auto r = walk(source, source, "", dest, budget); !r.ok()) return std::move(r).error();
  return dest;
}

Result<fs::path> stage_archive(const fs::path& archive_path, const fs::path& dest,
                               const StageLimits& limits) {
  std::unique_ptr<archive, ArchiveFree> a(archive_read_new());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), archive_path.c_str(), 65536) != ARCHIVE_OK) {
    return refused("cannot read " + archive_path.string() +
                   " as a .tar.gz archive: " + archive_error_string(a.get()));
  }
  if (auto r = make_dest(dest); !r.ok()) return std::move(r).error();
  Budget budget{limits};
  archive_entry* entry = nullptr;
  std::vector<char> buf(65536);
  while (true) {
    const int rc = archive_read_next_header(a.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      return refused("the archive is damaged: " + std::string(archive_error_string(a.get())));
    }
    const char* raw_name = archive_entry_pathname(entry);
    const std::string name = raw_name != nullptr ? raw_name : "";
    HEARTH_ASSIGN_OR_RETURN(auto parts, checked_parts(name, limits));
    if (parts.empty() || skipped(parts)) continue;
    if (archive_entry_hardlink(entry) != nullptr) {
      return refused(name + " is a hard link: an archived package holds plain files only");
    }
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) {
      HEARTH_ASSIGN_OR_RETURN(Fd made, open_folders(dest, parts, false));
      continue;
    }
    if (type != AE_IFREG) {
      return refused(name + " is a " +
                     (type == AE_IFLNK ? std::string("symbolic link")
                                       : std::string("device, FIFO or socket")) +
                     ": an archived package holds plain files and folders only");
    }
    if (archive_entry_size_is_set(entry) != 0 &&
        static_cast<std::uint64_t>(archive_entry_size(entry)) > limits.max_file_bytes) {
      return refused(name + " is larger than " + std::to_string(limits.max_file_bytes) + " bytes");
    }
    if (auto r = budget.add_file(name); !r.ok()) return std::move(r).error();
    HEARTH_ASSIGN_OR_RETURN(Fd out, create_file(dest, parts, name));
    std::uint64_t written = 0;
    while (true) {
      const la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) {
        return refused("the archive is damaged at " + name + ": " + archive_error_string(a.get()));
      }
      written += static_cast<std::uint64_t>(n);
      if (auto r = budget.add_bytes(name, written, static_cast<std::uint64_t>(n)); !r.ok()) {
        return std::move(r).error();
      }
      if (auto r = write_all(out.get(), buf.data(), static_cast<std::size_t>(n), name); !r.ok()) {
        return std::move(r).error();
      }
    }
  }
  std::error_code ec;
  if (fs::exists(dest / "APP.md", ec)) return dest;
  std::vector<fs::path> top;
  for (const auto& e : fs::directory_iterator(dest, ec)) top.push_back(e.path());
  if (top.size() == 1 && fs::is_directory(top[0], ec) && fs::exists(top[0] / "APP.md", ec)) {
    return top[0];
  }
  return dest;
}

namespace {

constexpr std::string_view kLockSuffix = ".lock";
/// Deeper than any package the stager accepts (max_depth 32) plus the entry's own folders; a
/// tree deeper than this was not made by hearth and is left for a person.
constexpr int kMaxRemoveDepth = 64;

Error removal_failed(const std::string& name, int error) {
  return Error::make(ErrorCode::kInternalError,
                     "cannot remove " + name + ": " + std::strerror(error));
}

/// The names in the folder `dir` (without . and ..), read through a descriptor of its own.
Result<std::vector<std::string>> names_in(int dir, const std::string& shown) {
  auto names = names_in_folder(dir);
  if (!names) return removal_failed(shown, errno);
  return std::move(*names);
}

/// Removes `name` below the folder `parent`: a folder with everything in it, anything else
/// (a link too) with unlink. Every step is relative to a descriptor opened with O_NOFOLLOW.
Status remove_below(int parent, const std::string& name, const std::string& shown, int depth) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status{} : Status(removal_failed(shown, errno));
  }
  if (S_ISDIR(st.st_mode)) {
    if (depth > kMaxRemoveDepth) {
      return Error::make(ErrorCode::kInternalError,
                         "cannot remove " + shown + ": nested deeper than " +
                             std::to_string(kMaxRemoveDepth) + " folders");
    }
    Fd dir(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return removal_failed(shown, errno);
    // An installed package's folders are read-only (0555): their entries can only be unlinked
    // once the folder is writable. fchmod acts on the folder opened, never through a link.
    ::fchmod(dir.get(), 0700);
    HEARTH_ASSIGN_OR_RETURN(auto names, names_in(dir.get(), shown));
    for (const auto& n : names) {
      std::string below = shown;
      below += '/';
      below += n;
      HEARTH_RETURN_IF_ERROR(remove_below(dir.get(), n, below, depth + 1));
    }
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return removal_failed(shown, errno);
    }
    return {};
  }
  if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) {
    return removal_failed(shown, errno);
  }
  return {};
}

/// Whether `fd` is still the file named `name` in `dir` (a stale-lock sweep unlinks the lock
/// file of an entry it took over; a lock taken on an unlinked file protects nothing).
bool still_named(int dir, const std::string& name, int fd) {
  struct stat by_fd {};
  struct stat by_name {};
  return ::fstat(fd, &by_fd) == 0 && by_fd.st_nlink > 0 &&
         ::fstatat(dir, name.c_str(), &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
         by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

int lock_blocking(int fd, int op) {
  while (::flock(fd, op) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

}  // namespace

Status remove_tree_nofollow(const fs::path& path) {
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return Error::make(ErrorCode::kInternalError, "cannot remove " + path.string());
  }
  Fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return errno == ENOENT ? Status{} : Status(removal_failed(path.string(), errno));
  return remove_below(dir.get(), name, path.string(), 0);
}

Result<StagingEntry> StagingEntry::create(const fs::path& staging) {
  Fd dir(::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot open " + staging.string() + ": " + std::strerror(errno));
  }
  // A sweep in another process may take a lock file between its creation and our flock and
  // unlink it: then this lock protects nothing, and another name is tried.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string id = random_hex(8);
    const std::string lock_name = id + std::string(kLockSuffix);
    Fd lock(::openat(dir.get(), lock_name.c_str(),
                     O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock) {
      if (errno == EEXIST) continue;
      return Error::make(
          ErrorCode::kInternalError,
          "cannot create a lock file in " + staging.string() + ": " + std::strerror(errno));
    }
    if (const int err = lock_blocking(lock.get(), LOCK_EX); err != 0) {
      return Error::make(
          ErrorCode::kInternalError,
          "cannot lock " + (staging / lock_name).string() + ": " + std::strerror(err));
    }
    if (!still_named(dir.get(), lock_name, lock.get())) continue;
    if (::mkdirat(dir.get(), id.c_str(), 0700) != 0) {
      const int err = errno;
      ::unlinkat(dir.get(), lock_name.c_str(), 0);
      return Error::make(ErrorCode::kInternalError,
                         "cannot create " + (staging / id).string() + ": " + std::strerror(err));
    }
    StagingEntry entry;
    entry.dir_ = staging / id;
    entry.lock_ = staging / lock_name;
    entry.lock_fd_ = std::move(lock);
    return entry;
  }
  return Error::make(ErrorCode::kInternalError,
                     "cannot make a staging folder in " + staging.string());
}

StagingEntry::StagingEntry(StagingEntry&& other) noexcept
    : dir_(std::move(other.dir_)),
      lock_(std::move(other.lock_)),
      lock_fd_(std::move(other.lock_fd_)) {
  other.dir_.clear();
  other.lock_.clear();
}

StagingEntry& StagingEntry::operator=(StagingEntry&& other) noexcept {
  if (this != &other) {
    release();
    dir_ = std::move(other.dir_);
    lock_ = std::move(other.lock_);
    lock_fd_ = std::move(other.lock_fd_);
    other.dir_.clear();
    other.lock_.clear();
  }
  return *this;
}

void StagingEntry::release() {
  if (!lock_fd_) return;
  // The folder first, then the lock file: a folder never outlives its lock file while this
  // process lives, so a sweep never meets a folder of ours without one.
  (void)remove_tree_nofollow(dir_);
  Fd parent(::open(lock_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const std::string name = lock_.filename().string();
  if (parent && still_named(parent.get(), name, lock_fd_.get())) {
    ::unlinkat(parent.get(), name.c_str(), 0);
  }
  lock_fd_.reset();  // the lock goes with the descriptor
  dir_.clear();
  lock_.clear();
}

std::vector<std::string> remove_stale_staging(const fs::path& staging) {
  std::vector<std::string> removed;
  Fd dir(::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return removed;
  auto names = names_in(dir.get(), staging.string());
  if (!names.ok()) return removed;
  // First the lock files: one that can be locked belongs to a stager that is gone; its folder
  // goes while the lock is held (a new stager cannot pick the name: its lock file exists).
  for (const auto& name : names.value()) {
    if (!name.ends_with(kLockSuffix) || name.size() == kLockSuffix.size()) continue;
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    Fd lock(::openat(dir.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // held: in use
    if (!still_named(dir.get(), name, lock.get())) continue;
    const std::string id = name.substr(0, name.size() - kLockSuffix.size());
    if (remove_below(dir.get(), id, (staging / id).string(), 0).ok() &&
        ::unlinkat(dir.get(), name.c_str(), 0) == 0) {
      removed.push_back(id);
    }
  }
  // Then everything else that has no lock file beside it. A stager makes its lock file before
  // its folder and unlinks it after, so a folder without one has no stager.
  names = names_in(dir.get(), staging.string());
  if (!names.ok()) return removed;
  const std::set<std::string> present(names.value().begin(), names.value().end());
  for (const auto& name : names.value()) {
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (name.ends_with(kLockSuffix) && S_ISREG(st.st_mode)) continue;  // held (above)
    if (present.contains(name + std::string(kLockSuffix))) continue;
    struct stat lock_st {};
    if (::fstatat(dir.get(), (name + std::string(kLockSuffix)).c_str(), &lock_st,
                  AT_SYMLINK_NOFOLLOW) == 0) {
      continue;  // made since the listing: a stager starting now
    }
    if (remove_below(dir.get(), name, (staging / name).string(), 0).ok()) removed.push_back(name);
  }
  return removed;
}

}  // namespace hearth::agentapp
