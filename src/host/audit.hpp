#pragma once
/// The audit log (lavs-spec-v1 6.1 "Auditing"): one JSON line per call, appended with a single
/// write(2) so that lines from concurrent calls never interleave. A line cut short (the daemon
/// killed during the write, a full disk) is never continued by the next record: the next record
/// starts on a new line, so a reader that skips lines that are not JSON loses only that one.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "common/fd.hpp"
#include "common/result.hpp"
#include "json/json.hpp"

namespace hearth::host {

struct AuditRecord {
  std::string service;
  std::string endpoint;
  std::string method;     ///< JSON-RPC method, e.g. "lavs/call"
  std::string transport;  ///< "http", "ws", "inproc"
  std::chrono::microseconds duration{0};
  std::optional<ErrorCode> error;  ///< nullopt: the call succeeded
  std::string client;              ///< what the client calls itself (X-Hearth-Client), may be empty
  std::string mount;               ///< the view mount a call was made for (view/*), else empty
  /// Overrides "ok"/"error" where an outcome says more (A2S: "needs_input", "rate_limited", ...).
  std::string outcome;
  json::object detail;  ///< more about the record (A2S: domain, HTTP status); never a secret
};

class AuditLog {
 public:
  /// A log that records nothing.
  AuditLog() = default;
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  /// Opens (creating, mode 0600) `file` for appending; a last line left without its end (the
  /// daemon was killed while writing it) is ended first.
  Status open(const std::filesystem::path& file);
  void record(const AuditRecord& record);
  const std::filesystem::path& path() const { return path_; }

  /// The line written for `record` at `now` (exposed for tests).
  static std::string format(const AuditRecord& record, std::chrono::system_clock::time_point now);

 private:
  Fd fd_;
  std::atomic<bool> torn_{false};  ///< the last write was short: start the next on a new line
  std::filesystem::path path_;
};

}  // namespace hearth::host
