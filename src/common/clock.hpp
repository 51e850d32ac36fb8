#pragma once
/// Times as hearth writes them: RFC 3339 in UTC with milliseconds ("2026-11-24T10:02:11.520Z"),
/// in the audit log and in notifications.

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace hearth {

inline std::string utc_timestamp(std::chrono::system_clock::time_point at) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[40];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char full[48];
  std::snprintf(full, sizeof full, "%s.%03dZ", stamp, static_cast<int>(ms % 1000));
  return full;
}

/// The current time as utc_timestamp writes it.
inline std::string utc_now() {
  return utc_timestamp(std::chrono::system_clock::now());
}

}  // namespace hearth
