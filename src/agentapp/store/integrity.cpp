#include "agentapp/store/integrity.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/beneath.hpp"
#include "common/fd.hpp"
#include "common/sha256.hpp"

namespace hearth::agentapp {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxTreeDepth = 64;

Error tree_error(std::string message) {
  return Error::make(ErrorCode::kInternalError, std::move(message));
}

std::string kind_name(TreeEntry::Kind kind) {
  switch (kind) {
    case TreeEntry::Kind::kFile:
      return "a file";
    case TreeEntry::Kind::kFolder:
      return "a folder";
    case TreeEntry::Kind::kLink:
      return "a symbolic link";
    case TreeEntry::Kind::kOther:
      return "a device, FIFO or socket";
  }
  return "a file";
}

/// The SHA-256 of the plain file `name` in `dir`, opened without following a link; the file
/// must still be a plain file once opened.
TreeEntry hash_file(int dir, const std::string& name) {
  TreeEntry entry;
  // O_NONBLOCK: a FIFO put there between the stat and the open does not hang the check.
  Fd in(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!in) {
    entry.kind = errno == ELOOP ? TreeEntry::Kind::kLink : TreeEntry::Kind::kFile;
    entry.error = std::strerror(errno);
    return entry;
  }
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    entry.kind = S_ISDIR(st.st_mode) ? TreeEntry::Kind::kFolder : TreeEntry::Kind::kOther;
    return entry;
  }
  Sha256 hash;
  std::string buf(std::size_t{1} << 16, '\0');
  while (true) {
    const ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      entry.error = std::strerror(errno);
      return entry;
    }
    if (n == 0) break;
    hash.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  entry.sha256 = hash.hex();
  return entry;
}

Status read_tree_below(int dir, const std::string& rel, int depth, PackageTree& out) {
  if (depth > kMaxTreeDepth) {
    return tree_error("the package is nested deeper than " + std::to_string(kMaxTreeDepth) +
                      " folders at " + rel);
  }
  auto listed = names_in_folder(dir);
  if (!listed) {
    return tree_error("cannot read the folder " + (rel.empty() ? "." : rel) + ": " +
                      std::strerror(errno));
  }
  for (const auto& name : *listed) {
    if (out.size() >= kMaxTreeEntries) {
      return tree_error("the package holds more than " + std::to_string(kMaxTreeEntries) +
                        " entries");
    }
    std::string path = rel;
    if (!path.empty()) path += '/';
    path += name;
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // gone since the listing
      out[path] = TreeEntry{TreeEntry::Kind::kOther, "", std::strerror(errno)};
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      out[path] = TreeEntry{TreeEntry::Kind::kLink, "", ""};
    } else if (S_ISDIR(st.st_mode)) {
      Fd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) {
        out[path] = TreeEntry{TreeEntry::Kind::kFolder, "", std::strerror(errno)};
        continue;
      }
      out[path] = TreeEntry{TreeEntry::Kind::kFolder, "", ""};
      HEARTH_RETURN_IF_ERROR(read_tree_below(sub.get(), path, depth + 1, out));
    } else if (S_ISREG(st.st_mode)) {
      out[path] = hash_file(dir, name);
    } else {
      out[path] = TreeEntry{TreeEntry::Kind::kOther, "", ""};
    }
  }
  return {};
}

}  // namespace

Result<PackageTree> read_package_tree(const fs::path& root) {
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) {
    const int err = errno;
    struct stat st {};
    const bool link = ::lstat(root.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
    return tree_error(
        "cannot open the package folder " + root.string() + ": " +
        (link ? std::string("it is a symbolic link") : std::string(std::strerror(err))));
  }
  PackageTree tree;
  HEARTH_RETURN_IF_ERROR(read_tree_below(dir.get(), "", 0, tree));
  return tree;
}

json::object tree_to_json(const PackageTree& tree) {
  json::object out;
  for (const auto& [path, entry] : tree) {
    switch (entry.kind) {
      case TreeEntry::Kind::kFile:
        out[path] = "sha256:" + entry.sha256;
        break;
      case TreeEntry::Kind::kFolder:
        out[path] = "folder";
        break;
      case TreeEntry::Kind::kLink:
        out[path] = "link";
        break;
      case TreeEntry::Kind::kOther:
        out[path] = "other";
        break;
    }
  }
  return out;
}

Result<PackageTree> tree_from_json(const json::value& value) {
  if (!value.is_object()) return tree_error("the recorded file list is not an object");
  PackageTree tree;
  for (const auto& [key, v] : value.get_object()) {
    if (!v.is_string()) {
      return tree_error("the recorded file list is damaged at " + std::string(key));
    }
    const std::string_view text = v.get_string();
    TreeEntry entry;
    if (text.starts_with("sha256:")) {
      entry.kind = TreeEntry::Kind::kFile;
      entry.sha256 = std::string(text.substr(7));
    } else if (text == "folder") {
      entry.kind = TreeEntry::Kind::kFolder;
    } else if (text == "link") {
      entry.kind = TreeEntry::Kind::kLink;
    } else {
      entry.kind = TreeEntry::Kind::kOther;
    }
    tree.emplace(std::string(key), std::move(entry));
  }
  return tree;
}

std::vector<std::string> tree_changes(const PackageTree& recorded, const PackageTree& now) {
  std::vector<std::string> out;
  auto r = recorded.begin();
  auto n = now.begin();
  while (r != recorded.end() || n != now.end()) {
    if (n == now.end() || (r != recorded.end() && r->first < n->first)) {
      out.push_back(r->first + " was removed since install");
      ++r;
    } else if (r == recorded.end() || n->first < r->first) {
      out.push_back(n->first + " was added since install (" + kind_name(n->second.kind) + ")");
      ++n;
    } else {
      const auto& was = r->second;
      const auto& is = n->second;
      if (was.kind != is.kind) {
        out.push_back(r->first + " is " + kind_name(is.kind) + " now (" + kind_name(was.kind) +
                      " at install)");
      } else if (!is.error.empty()) {
        out.push_back(r->first + " cannot be read since install: " + is.error);
      } else if (was.kind == TreeEntry::Kind::kFile && was.sha256 != is.sha256) {
        out.push_back(r->first + " changed since install");
      }
      ++r;
      ++n;
    }
  }
  return out;
}

}  // namespace hearth::agentapp
