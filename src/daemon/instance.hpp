#pragma once
/// One daemon per state folder: the lock that says so, the token that stays the same across
/// restarts, and what `hearth status`, `stop` and `logs` read about the daemon that runs.
///
/// The lock is `STATE_DIR/daemon.lock`, held with flock(2) for the daemon's life (closed on
/// exec, so handler processes never inherit it; released by the kernel however the daemon
/// ends). It holds the daemon's pid as text. Whether a daemon runs is whether the lock is held:
/// a `daemon.json` left behind by a killed daemon says nothing.

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/fd.hpp"
#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::daemon {

/// The lock of one state folder, held while this object lives.
class InstanceLock {
 public:
  /// Takes the lock of `state_dir` (which must exist) and writes our pid into it. When another
  /// process holds it: an error naming that process's pid and the folder (data: pid, stateDir,
  /// and url when its daemon.json says one).
  static Result<InstanceLock> acquire(const std::filesystem::path& state_dir);

 private:
  explicit InstanceLock(Fd fd) : fd_(std::move(fd)) {}
  Fd fd_;
};

/// The daemon serving `state_dir`, as seen from another process.
struct Instance {
  bool running = false;  ///< the lock is held
  pid_t pid = 0;         ///< the holder's pid (0 when unknown or not running)
  /// daemon.json when running and written (the daemon writes it once every component is ready).
  std::optional<json::object> document;
};

/// Looks at `state_dir` without changing it.
Instance find_instance(const std::filesystem::path& state_dir);

/// The token at `file` when it is one we wrote (a regular file of ours, mode 0600, 64 hex
/// characters), else a new one written there (mode 0600). `rotate`: always a new one.
Result<std::string> load_or_create_token(const std::filesystem::path& file, bool rotate);

/// The daemon's own log, beside its audit log.
inline std::filesystem::path log_file(const std::filesystem::path& state_dir) {
  return state_dir / "hearth.log";
}

/// The default logger also writes to a file (rotated at 5 MiB, 3 kept), with UTC times, while
/// this object lives. Made and destroyed at start-up and shutdown only (the logger's sinks are
/// not changed while other threads log).
class FileLog {
 public:
  /// Adds the file's sink; an error when the file cannot be opened.
  static Result<FileLog> open(const std::filesystem::path& file);
  FileLog(FileLog&& other) noexcept : sink_(std::move(other.sink_)) {}
  FileLog& operator=(FileLog&&) = delete;
  FileLog(const FileLog&) = delete;
  FileLog& operator=(const FileLog&) = delete;
  ~FileLog();

 private:
  explicit FileLog(std::shared_ptr<void> sink) : sink_(std::move(sink)) {}
  std::shared_ptr<void> sink_;  ///< the spdlog sink (kept out of this header)
};

}  // namespace hearth::daemon
