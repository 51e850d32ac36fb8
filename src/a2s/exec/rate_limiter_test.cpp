#include "a2s/exec/rate_limiter.hpp"

#include <gtest/gtest.h>

namespace hearth::a2s {
namespace {

using namespace std::chrono_literals;
using Clock = RateLimiter::Clock;

TEST(RateLimiter, NoLimitNeverWaits) {
  RateLimiter limiter;
  const auto now = Clock::now();
  for (int i = 0; i < 100; ++i) {
    auto slot = limiter.acquire("api.example.com", std::nullopt, now, 0s);
    EXPECT_TRUE(slot.granted);
    EXPECT_EQ(slot.wait, Clock::duration::zero());
  }
}

TEST(RateLimiter, BurstThenSpacedByTheRate) {
  RateLimiter limiter;
  const RateLimit limit{2, 1, 0};  // two a second, bursts of two
  const auto now = Clock::now();
  EXPECT_EQ(limiter.acquire("d", limit, now, 10s).wait, Clock::duration::zero());
  EXPECT_EQ(limiter.acquire("d", limit, now, 10s).wait, Clock::duration::zero());
  auto third = limiter.acquire("d", limit, now, 10s);
  EXPECT_TRUE(third.granted);
  EXPECT_NEAR(std::chrono::duration<double>(third.wait).count(), 0.5, 1e-6);
  auto fourth = limiter.acquire("d", limit, now, 10s);
  EXPECT_NEAR(std::chrono::duration<double>(fourth.wait).count(), 1.0, 1e-6);
  // Another domain has its own bucket.
  EXPECT_EQ(limiter.acquire("other", limit, now, 10s).wait, Clock::duration::zero());
  // Time refills the bucket.
  EXPECT_TRUE(limiter.acquire("d", limit, now + 5s, 0s).granted);
}

TEST(RateLimiter, AWaitBeyondTheMaximumTakesNoSlot) {
  RateLimiter limiter;
  const RateLimit limit{1, 10, 0};
  const auto now = Clock::now();
  EXPECT_TRUE(limiter.acquire("d", limit, now, 0s).granted);
  auto refused = limiter.acquire("d", limit, now, 1s);
  EXPECT_FALSE(refused.granted);
  EXPECT_NEAR(std::chrono::duration<double>(refused.wait).count(), 10.0, 1e-6);
  // Nothing was reserved by the refusal: after 10 s one slot is there again.
  EXPECT_EQ(limiter.acquire("d", limit, now + 10s, 0s).wait, Clock::duration::zero());
}

TEST(RateLimiter, PauseHoldsEveryRequestUntilItEnds) {
  RateLimiter limiter;
  const auto now = Clock::now();
  limiter.pause("d", now + 3s);
  limiter.pause("d", now + 1s);  // a shorter pause never shortens
  auto slot = limiter.acquire("d", std::nullopt, now, 10s);
  EXPECT_TRUE(slot.granted);
  EXPECT_EQ(slot.wait, 3s);
  EXPECT_FALSE(limiter.acquire("d", std::nullopt, now, 1s).granted);
  EXPECT_EQ(limiter.acquire("d", std::nullopt, now + 4s, 0s).wait, Clock::duration::zero());
}

TEST(RetryAfter, SecondsAndHttpDates) {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37
  EXPECT_EQ(parse_retry_after("2", now), std::chrono::seconds(2));
  EXPECT_EQ(parse_retry_after(" 120 ", now), std::chrono::seconds(120));
  EXPECT_EQ(parse_retry_after("99999999999999999999", now), std::chrono::seconds(3600));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now), std::chrono::seconds(60));
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), std::chrono::seconds(0));
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("-1", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
}

}  // namespace
}  // namespace hearth::a2s
