#pragma once
/// An owned file descriptor: closed when it goes out of scope. Header-only and free of other
/// hearth code, so that the jail launcher uses it too.

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

namespace hearth {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  /// Gives the descriptor up without closing it: the caller owns it now.
  int release() { return std::exchange(fd_, -1); }
  /// Closes the descriptor held (if any) and holds `fd` instead.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);  // the one owner's close
    fd_ = fd;
  }
  /// Closes now, returning close(2)'s errno (0 when fine): NFS reports write errors there.
  int close() {
    const int fd = release();
    return fd >= 0 && ::close(fd) != 0 ? errno : 0;  // the one owner's close
  }
  /// A second descriptor of the same open file, close-on-exec; invalid (errno set) on failure.
  Fd dup() const {
    if (fd_ < 0) {
      errno = EBADF;
      return Fd();
    }
    return Fd(::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  }

 private:
  int fd_ = -1;
};

/// The two ends of a pipe ([0] reads, [1] writes) or of a socket pair.
using FdPair = std::array<Fd, 2>;

/// pipe2(2) into `ends`; 0, or the errno of the failure (`ends` then untouched).
inline int open_pipe(FdPair& ends, int flags = O_CLOEXEC) {
  int fds[2];
  if (::pipe2(fds, flags) != 0) return errno;
  ends[0].reset(fds[0]);
  ends[1].reset(fds[1]);
  return 0;
}

/// socketpair(AF_UNIX, type) into `ends`; 0, or the errno of the failure (`ends` then untouched).
inline int open_socket_pair(FdPair& ends, int type) {
  int fds[2];
  if (::socketpair(AF_UNIX, type, 0, fds) != 0) return errno;
  ends[0].reset(fds[0]);
  ends[1].reset(fds[1]);
  return 0;
}

}  // namespace hearth
