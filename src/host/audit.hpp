#pragma once
/// The audit log (lavs-spec-v1 6.1 "Auditing"): one JSON line per call, appended with a single
/// write(2) so that lines from concurrent calls never interleave.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "common/result.hpp"

namespace hearth::host {

struct AuditRecord {
  std::string service;
  std::string endpoint;
  std::string method;     ///< JSON-RPC method, e.g. "lavs/call"
  std::string transport;  ///< "http", "ws", "inproc"
  std::chrono::microseconds duration{0};
  std::optional<ErrorCode> error;  ///< nullopt: the call succeeded
};

class AuditLog {
 public:
  /// A log that records nothing.
  AuditLog() = default;
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  /// Opens (creating, mode 0600) `file` for appending.
  Status open(const std::filesystem::path& file);
  void record(const AuditRecord& record);
  const std::filesystem::path& path() const { return path_; }

  /// The line written for `record` at `now` (exposed for tests).
  static std::string format(const AuditRecord& record, std::chrono::system_clock::time_point now);

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace hearth::host
