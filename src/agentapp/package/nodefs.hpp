#pragma once
/// The file system as the reference CLI's Node calls see it (path.join/resolve, existsSync,
/// statSync, readdirSync, readFileSync), with their error messages, and the two package hashes
/// the format defines over it. Every failure is a value here; reference.cpp turns one into the
/// CLI's exit code 2.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace hearth::agentapp::nodefs {

/// path.resolve(p) against the working directory: absolute, normalised, no trailing slash.
std::string resolve(std::string_view p);
/// path.join(a, b): joined with "/" and normalised (a trailing slash is kept).
std::string join(std::string_view a, std::string_view b);
/// path.basename(p) of a resolved path.
std::string basename(std::string_view p);

/// fs.existsSync: follows links; false on any error.
bool exists(const std::string& p);
/// statSync(p).isDirectory(), with Node's error ("ENOENT: no such file or directory, stat
/// '<p>'") when stat fails.
Result<bool> is_directory(const std::string& p);
/// readdirSync(p): names in byte order (libuv sorts them), decoded as UTF-8.
Result<std::vector<std::string>> read_dir(const std::string& p);
/// readFileSync(p): the bytes of a regular file. Unlike Node, a FIFO, socket or device is an
/// error rather than a read that may never end.
Result<std::string> read_file(const std::string& p);

/// manifestHash: "sha256:" and the lowercase hex SHA-256 of APP.md's bytes.
Result<std::string> manifest_hash(const std::string& app_md);
/// packageHash (docs/agent-apps.md, "Package hash"): every file below `root` in per-folder
/// UTF-16 name order, folders (links followed) expanded in place, `node_modules` and `.git`
/// skipped; SHA-256 over each file's relative path, a NUL byte, its bytes and a NUL byte.
/// `skip_root_file` names one more file of the root folder to leave out (hearth's signature
/// digest leaves out the signature file itself).
Result<std::string> package_hash(const std::string& root, std::string_view skip_root_file = {});

}  // namespace hearth::agentapp::nodefs
