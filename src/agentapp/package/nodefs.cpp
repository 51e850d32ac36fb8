#include "agentapp/package/nodefs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "agentapp/package/jsv.hpp"
#include "common/fd.hpp"
#include "common/sha256.hpp"

namespace hearth::agentapp::nodefs {

namespace {

/// libuv's name and description of an errno value, as Node prints them.
std::string uv_error(int err, std::string_view syscall, std::string_view path) {
  const char* name = nullptr;
  const char* text = nullptr;
  switch (err) {
    case ENOENT:
      name = "ENOENT";
      text = "no such file or directory";
      break;
    case EACCES:
      name = "EACCES";
      text = "permission denied";
      break;
    case EPERM:
      name = "EPERM";
      text = "operation not permitted";
      break;
    case ELOOP:
      name = "ELOOP";
      text = "too many symbolic links encountered";
      break;
    case ENAMETOOLONG:
      name = "ENAMETOOLONG";
      text = "name too long";
      break;
    case ENOTDIR:
      name = "ENOTDIR";
      text = "not a directory";
      break;
    case EISDIR:
      name = "EISDIR";
      text = "illegal operation on a directory";
      break;
    case EMFILE:
      name = "EMFILE";
      text = "too many open files";
      break;
    case EIO:
      name = "EIO";
      text = "i/o error";
      break;
    default:
      name = "EIO";
      text = std::strerror(err);
      break;
  }
  std::string out = std::string(name) + ": " + text + ", " + std::string(syscall);
  if (!path.empty()) out += " '" + std::string(path) + "'";
  return out;
}

Error fs_error(int err, std::string_view syscall, std::string_view path) {
  return Error::make(ErrorCode::kInvalidParams, uv_error(err, syscall, path));
}

std::string normalize(std::string_view p) {
  const bool absolute = !p.empty() && p.front() == '/';
  const bool trailing = !p.empty() && p.back() == '/';
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= p.size()) {
    const auto slash = p.find('/', start);
    const auto part = p.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  if (out.empty()) out = absolute ? "/" : ".";
  if (trailing && out.back() != '/') out += '/';
  return out;
}

/// readFileSync's reading of `p`, in chunks handed to `sink`.
template <class Sink>
Result<void> read_chunks(const std::string& p, Sink sink) {
  Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return fs_error(errno, "open", p);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fs_error(errno, "fstat", p);
  if (S_ISDIR(st.st_mode)) return fs_error(EISDIR, "read", "");
  if (!S_ISREG(st.st_mode)) {
    return Error::make(ErrorCode::kInvalidParams,
                       "'" + p + "' is not a regular file (a FIFO, socket or device); refused");
  }
  std::string buf(65536, '\0');
  while (true) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fs_error(errno, "read", "");
    if (n == 0) return {};
    sink(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
}

/// listFiles + the hash update of hashDirectory, depth first.
Result<void> hash_tree(Sha256& sha, const std::string& dir, const std::string& rel_prefix,
                       std::string_view skip_root_file) {
  HEARTH_ASSIGN_OR_RETURN(auto names, read_dir(dir));
  std::sort(names.begin(), names.end(), jsv::utf16_less);
  for (const auto& name : names) {
    if (name == "node_modules" || name == ".git") continue;
    if (rel_prefix.empty() && !skip_root_file.empty() && name == skip_root_file) continue;
    const std::string absolute = join(dir, name);
    HEARTH_ASSIGN_OR_RETURN(const bool is_dir, is_directory(absolute));
    std::string rel = rel_prefix;
    if (!rel.empty()) rel += '/';
    rel += name;
    if (is_dir) {
      if (auto r = hash_tree(sha, absolute, rel, {}); !r.ok()) return std::move(r).error();
      continue;
    }
    sha.update(rel);
    sha.update(std::string_view("\0", 1));
    auto r = read_chunks(absolute, [&sha](std::string_view bytes) { sha.update(bytes); });
    if (!r.ok()) return std::move(r).error();
    sha.update(std::string_view("\0", 1));
  }
  return {};
}

}  // namespace

std::string resolve(std::string_view p) {
  if (!p.empty() && p.front() == '/') {
    std::string out = normalize(p);
    if (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
  }
  std::error_code ec;
  const std::string cwd = jsv::decode_utf8(std::filesystem::current_path(ec).string());
  std::string out = normalize(cwd + "/" + std::string(p));
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string join(std::string_view a, std::string_view b) {
  if (b.empty()) return normalize(a);
  if (a.empty()) return normalize(b);
  return normalize(std::string(a) + "/" + std::string(b));
}

std::string basename(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const auto slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

bool exists(const std::string& p) {
  if (p.find('\0') != std::string::npos) return false;
  return ::access(p.c_str(), F_OK) == 0;
}

Result<bool> is_directory(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return fs_error(errno, "stat", p);
  return S_ISDIR(st.st_mode);
}

Result<std::vector<std::string>> read_dir(const std::string& p) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(p.c_str()), ::closedir);
  if (!dir) return fs_error(errno, "scandir", p);
  std::vector<std::string> raw;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    raw.emplace_back(name);
  }
  std::sort(raw.begin(), raw.end());  // scandir with strcmp, as libuv calls it
  for (auto& name : raw) name = jsv::decode_utf8(name);
  return raw;
}

Result<std::string> read_file(const std::string& p) {
  std::string out;
  auto r = read_chunks(p, [&out](std::string_view bytes) { out.append(bytes); });
  if (!r.ok()) return std::move(r).error();
  return out;
}

Result<std::string> manifest_hash(const std::string& app_md) {
  Sha256 sha;
  auto r = read_chunks(app_md, [&sha](std::string_view bytes) { sha.update(bytes); });
  if (!r.ok()) return std::move(r).error();
  return "sha256:" + sha.hex();
}

Result<std::string> package_hash(const std::string& root, std::string_view skip_root_file) {
  Sha256 sha;
  if (auto r = hash_tree(sha, root, "", skip_root_file); !r.ok()) return std::move(r).error();
  return "sha256:" + sha.hex();
}

}  // namespace hearth::agentapp::nodefs
