#include "common/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace hearth {

namespace {

bool is_link_error(int error) {
  return error == ELOOP || error == EXDEV || error == EMLINK;
}

/// The component-by-component walk for kernels without openat2 (before 5.6).
Fd walk(int dir_fd, const std::filesystem::path& rel, int flags, BeneathFailure& failure) {
  std::vector<std::string> parts;
  for (const auto& part : rel) {
    const std::string name = part.string();
    if (name.empty() || name == ".") continue;
    if (name == ".." || name == "/") {
      failure = {EXDEV, true};
      return Fd();
    }
    parts.push_back(name);
  }
  if (parts.empty()) {
    failure = {EISDIR, false};
    return Fd();
  }
  Fd current(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int f =
        last ? (flags | O_CLOEXEC | O_NOFOLLOW) : (O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    Fd next(::openat(current.get(), parts[i].c_str(), f));
    if (!next) {
      const int error = errno;
      // O_NOFOLLOW on a link gives ELOOP; O_DIRECTORY on a link to a folder gives ENOTDIR.
      bool link = is_link_error(error);
      if (error == ENOTDIR && !last) {
        struct stat st {};
        link = ::fstatat(current.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISLNK(st.st_mode);
      }
      failure = {link ? ELOOP : error, link};
      return Fd();
    }
    current = std::move(next);
  }
  return current;
}

}  // namespace

Fd open_beneath(const std::filesystem::path& dir, const std::filesystem::path& rel, int flags,
                BeneathFailure& failure) {
  failure = {};
  if (rel.is_absolute()) {
    failure = {EXDEV, true};
    return Fd();
  }
  Fd dir_fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) {
    failure = {errno, false};
    return Fd();
  }
  struct open_how how {};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string text = rel.string();
  long fd = ::syscall(SYS_openat2, dir_fd.get(), text.c_str(), &how, sizeof how);
  if (fd >= 0) return Fd(static_cast<int>(fd));
  const int error = errno;
  if (error == ENOSYS || error == EPERM /* a seccomp filter that does not know openat2 */) {
    return walk(dir_fd.get(), rel, flags, failure);
  }
  if (error == EAGAIN) {
    // RESOLVE_BENEATH may ask to retry when a rename raced the lookup: once more, then walk.
    fd = ::syscall(SYS_openat2, dir_fd.get(), text.c_str(), &how, sizeof how);
    if (fd >= 0) return Fd(static_cast<int>(fd));
    return walk(dir_fd.get(), rel, flags, failure);
  }
  failure = {error, is_link_error(error)};
  return Fd();
}

}  // namespace hearth
