#include "host/audit.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/clock.hpp"
#include "json/json.hpp"

namespace hearth::host {

AuditLog::~AuditLog() = default;

Status AuditLog::open(const std::filesystem::path& file) {
  Fd opened(::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!opened) {
    return Error::make(ErrorCode::kInternalError,
                       "cannot open audit log " + file.string() + ": " + std::strerror(errno));
  }
  fd_ = std::move(opened);
  const int fd = fd_.get();
  path_ = file;
  // A torn last line (kill -9 during a write, a full disk) must not swallow the next record.
  char last = '\n';
  const off_t size = ::lseek(fd, 0, SEEK_END);
  torn_ = size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n';
  return {};
}

std::string AuditLog::format(const AuditRecord& record, std::chrono::system_clock::time_point now) {
  // Written member by member into one string (one line a call: no JSON object built for it),
  // in the order a reader sees them; every string value escaped as JSON requires.
  std::string line;
  line.reserve(192);
  const auto member = [&line](std::string_view key) {
    line += line.empty() ? "{\"" : ",\"";
    line += key;
    line += "\":";
  };
  const auto text = [&](std::string_view key, std::string_view value) {
    member(key);
    json::serialize_string_to(line, value);
  };
  text("time", utc_timestamp(now));
  text("service", record.service);
  text("endpoint", record.endpoint);
  text("method", record.method);
  text("transport", record.transport);
  if (!record.client.empty()) text("client", record.client);
  if (!record.mount.empty()) text("mount", record.mount);
  member("durationMs");
  json::serialize_number_to(line, static_cast<double>(record.duration.count()) / 1000.0);
  text("outcome", !record.outcome.empty() ? std::string_view(record.outcome)
                                          : (record.error ? "error" : "ok"));
  if (record.error) {
    member("code");
    line += std::to_string(static_cast<int>(*record.error));
  }
  if (!record.detail.empty()) {
    member("detail");
    line += json::serialize(record.detail);
  }
  line += "}\n";
  return line;
}

void AuditLog::record(const AuditRecord& record) {
  if (!fd_) return;
  std::string line = format(record, std::chrono::system_clock::now());
  if (torn_.exchange(false)) line.insert(line.begin(), '\n');
  // O_APPEND + one write per line: concurrent records never interleave.
  ssize_t n = ::write(fd_.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    // Part of the line may be in the file: the next record starts on a new line.
    if (n > 0) torn_ = true;
    spdlog::warn("audit log {}: write failed: {}", path_.string(),
                 n < 0 ? std::strerror(errno) : "short write");
  }
}

}  // namespace hearth::host
