#include "common/beneath.hpp"

#include <dirent.h>
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

bool is_clean_relative(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos ||
      path.find('\\') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    const std::string_view part = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::optional<std::string> read_beneath(const std::filesystem::path& dir,
                                        const std::filesystem::path& rel, std::size_t limit) {
  BeneathFailure failure;
  Fd fd = open_beneath(dir, rel, O_RDONLY | O_NONBLOCK, failure);
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > limit) {
    return std::nullopt;
  }
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return out;
}

std::optional<std::vector<std::string>> names_in_folder(int dir) {
  Fd copy(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  DIR* d = copy ? ::fdopendir(copy.get()) : nullptr;
  if (d == nullptr) return std::nullopt;
  copy.release();  // closedir closes it
  ::rewinddir(d);  // the copy shares the offset of `dir`, which an earlier listing moved
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  const int read_error = errno;
  ::closedir(d);
  if (read_error != 0) {
    errno = read_error;
    return std::nullopt;
  }
  return names;
}

}  // namespace hearth
