#include "a2s/exec/rate_limiter.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>

#include "common/ascii.hpp"

namespace hearth::a2s {

RateLimiter::Slot RateLimiter::acquire(std::string_view domain,
                                       const std::optional<RateLimit>& limit, Clock::time_point now,
                                       Clock::duration max_wait) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(domain);
  if (it == buckets_.end()) it = buckets_.emplace(std::string(domain), Bucket{}).first;
  Bucket& bucket = it->second;
  Clock::time_point start = std::max(now, bucket.paused_until);
  if (!limit || limit->requests <= 0 || limit->period_seconds <= 0) {
    return {start - now <= max_wait, start - now};
  }
  const double rate = limit->requests / limit->period_seconds;  // tokens a second
  const double burst = limit->burst > 0 ? limit->burst : limit->requests;
  if (!bucket.started) {
    bucket.started = true;
    bucket.tokens = burst;
    bucket.refilled = now;
  }
  // Refill up to `start`.
  if (start > bucket.refilled) {
    const double elapsed = std::chrono::duration<double>(start - bucket.refilled).count();
    bucket.tokens = std::min(burst, bucket.tokens + elapsed * rate);
    bucket.refilled = start;
  }
  // Tokens may go negative: each waiting request has reserved its slot.
  const double after = bucket.tokens - 1;
  const Clock::duration wait =
      (start - now) + (after >= 0 ? Clock::duration{0}
                                  : std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(-after / rate)));
  if (wait > max_wait) return {false, wait};
  bucket.tokens = after;
  return {true, wait};
}

void RateLimiter::pause(std::string_view domain, Clock::time_point until) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(domain);
  if (it == buckets_.end()) it = buckets_.emplace(std::string(domain), Bucket{}).first;
  it->second.paused_until = std::max(it->second.paused_until, until);
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now) {
  const auto trimmed = ascii::trim(value);
  constexpr std::chrono::seconds kCap{3600};
  if (trimmed.empty()) return std::nullopt;
  if (std::all_of(trimmed.begin(), trimmed.end(), [](char c) { return ascii::is_digit(c); })) {
    long long seconds = 0;
    auto [end, ec] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), seconds);
    if (ec == std::errc::result_out_of_range) return kCap;
    if (ec != std::errc() || end != trimmed.data() + trimmed.size()) return std::nullopt;
    return std::min(std::chrono::seconds(seconds), kCap);
  }
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
  std::tm tm{};
  const std::string text(trimmed);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const auto when = std::chrono::system_clock::from_time_t(timegm(&tm));
  if (when <= now) return std::chrono::seconds(0);
  return std::min(std::chrono::duration_cast<std::chrono::seconds>(when - now), kCap);
}

}  // namespace hearth::a2s
