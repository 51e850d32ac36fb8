#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>

#include "common/fd.hpp"

namespace hearth {

namespace fs = std::filesystem;

namespace {

std::string random_suffix() {
  unsigned char bytes[8];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // No entropy source: fall back to something unique enough for O_EXCL retries.
      const auto fallback = static_cast<unsigned long long>(::getpid()) ^
                            static_cast<unsigned long long>(::time(nullptr)) ^
                            reinterpret_cast<std::uintptr_t>(&got);
      std::memcpy(bytes, &fallback, sizeof bytes);
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

/// The temporary name for `name`: hidden, marked, random, and within NAME_MAX.
std::string temp_name(const std::string& name) {
  const std::string suffix = std::string(kAtomicTempMarker) + random_suffix();
  const std::size_t room = NAME_MAX - 1 - suffix.size();
  return "." + name.substr(0, room) + suffix;
}

Error failure(const fs::path& path, int err, const std::string& what) {
  boost::json::object data;
  data["path"] = path.string();
  data["errno"] = errno_name(err);
  data["errnoValue"] = err;
  std::string message = "cannot write " + path.string() + ": " + what + ": " + std::strerror(err);
  if (is_disk_full_errno(err)) {
    message = "cannot write " + path.string() + ": the disk is full or the file size limit is " +
              "reached (" + std::strerror(err) + "); the file keeps its old content";
  }
  return Error::make(ErrorCode::kInternalError, std::move(message), std::move(data));
}

}  // namespace

int atomic_write_errno(const Error& error) {
  const auto* data = error.data.if_object();
  const auto* value = data != nullptr ? data->if_contains("errnoValue") : nullptr;
  return value != nullptr && value->is_int64() ? static_cast<int>(value->get_int64()) : EIO;
}

bool is_disk_full_errno(int err) {
  return err == ENOSPC || err == EDQUOT || err == EFBIG;
}

const char* errno_name(int err) {
  switch (err) {
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    case EFBIG:
      return "EFBIG";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    case EROFS:
      return "EROFS";
    case ENAMETOOLONG:
      return "ENAMETOOLONG";
    case EINVAL:
      return "EINVAL";
    case EXDEV:
      return "EXDEV";
    case EBUSY:
      return "EBUSY";
    default:
      return "EIO";
  }
}

Status write_file_atomic(const fs::path& path, std::string_view data,
                         const AtomicWriteOptions& options) {
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") return failure(path, EISDIR, "not a file name");
  fs::path folder = path.parent_path();
  if (folder.empty()) folder = ".";

  // The folder once, by descriptor: the temporary file, the rename and the fsync all happen in
  // the same folder even if a path component is swapped meanwhile.
  Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return failure(path, errno, "cannot open its folder");

  mode_t mode = 0666;
  bool set_mode = false;
  if (options.mode) {
    mode = *options.mode;
    set_mode = true;
  } else {
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      mode = st.st_mode & 07777;
      set_mode = true;
    }
  }

  std::string tmp;
  Fd file;
  for (int attempt = 0; attempt < 16; ++attempt) {
    tmp = temp_name(name);
    const int fd =
        ::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 set_mode ? 0600 : mode);
    if (fd >= 0) {
      file.reset(fd);
      break;
    }
    if (errno != EEXIST) return failure(path, errno, "cannot create a temporary file beside it");
  }
  if (file.get() < 0) return failure(path, EEXIST, "cannot create a temporary file beside it");

  auto abandon = [&](int err, const std::string& what) -> Status {
    file.close();
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    return failure(path, err, what);
  };

  if (set_mode && ::fchmod(file.get(), mode) != 0) return abandon(errno, "cannot set its mode");
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(file.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return abandon(errno, "write failed");
    }
    if (n == 0) return abandon(ENOSPC, "write failed");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(file.get()) != 0) return abandon(errno, "fsync failed");
  if (const int err = file.close(); err != 0) return abandon(err, "close failed");
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    return abandon(errno, "cannot rename the temporary file over it");
  }
  // The rename is done: a failed folder fsync cannot bring the old content back, so it is not
  // reported as a failed write (the new content is what readers see).
  ::fsync(dir.get());
  return {};
}

}  // namespace hearth
