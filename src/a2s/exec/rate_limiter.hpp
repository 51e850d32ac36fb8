#pragma once
/// Per-domain rate limiting for A2S requests (docs/a2s.md, "Rate limits"): a token bucket per
/// service domain from the definition's `rateLimits`, and a pause until a time a service named
/// itself (Retry-After, an errorPattern's retryAfter). Thread-safe; no I/O: it says how long to
/// wait, the caller waits.

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "a2s/model.hpp"

namespace hearth::a2s {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  struct Slot {
    bool granted = false;     ///< a slot was taken: wait `wait`, then send
    Clock::duration wait{0};  ///< granted: how long to wait first; refused: how long it would be
  };
  /// Takes one request's slot for `domain` at `now` when it comes within `max_wait`; a request
  /// that would wait longer takes nothing and is told how long it would have waited. With no
  /// limit and no pause, always granted at once.
  Slot acquire(std::string_view domain, const std::optional<RateLimit>& limit,
               Clock::time_point now, Clock::duration max_wait);

  /// Nothing goes to `domain` before `until` (a Retry-After). A later pause extends, never
  /// shortens.
  void pause(std::string_view domain, Clock::time_point until);

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled{};
    bool started = false;
    Clock::time_point paused_until{};
  };
  std::mutex mutex_;
  std::map<std::string, Bucket, std::less<>> buckets_;
};

/// Reads a Retry-After header value (RFC 9110 10.2.3): delay-seconds or an HTTP-date. nullopt
/// when it is neither. Capped at an hour.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now);

}  // namespace hearth::a2s
