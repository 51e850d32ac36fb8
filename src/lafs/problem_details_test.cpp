#include "lafs/problem_details.hpp"

#include <gtest/gtest.h>

namespace hearth::lafs {
namespace {

TEST(LafsProblemDetails, FromARegisteredError) {
  ErrorInfo e = ErrorInfo::from_registry(kRateLimited, "slow down",
                                         json::object{{"limitRemaining", 0}, {"status", 1}});
  e.retry_after_ms = 30000;
  auto pd = problem_details(e, "req_42");
  EXPECT_EQ(pd.at("type"), "https://lafs.dev/errors/v1/rate-limited");
  EXPECT_EQ(pd.at("title"), "Rate limit exceeded");
  EXPECT_EQ(pd.at("status"), 429);
  EXPECT_EQ(pd.at("detail"), "slow down");
  EXPECT_EQ(pd.at("instance"), "req_42");
  EXPECT_EQ(pd.at("code"), "E_RATE_LIMITED");
  EXPECT_EQ(pd.at("retryable"), true);
  EXPECT_EQ(pd.at("retryAfterMs"), 30000);
  EXPECT_EQ(pd.at("agentAction"), "wait");
  EXPECT_EQ(pd.at("limitRemaining"), 0);  // details become extension members
  EXPECT_EQ(pd.at("status"), 429);        // ... but never overwrite standard ones
  EXPECT_EQ(kProblemContentType, "application/problem+json");
}

TEST(LafsProblemDetails, Unregistered) {
  ErrorInfo e = ErrorInfo::from_registry("E_CUSTOM_THING", "odd");
  auto pd = problem_details(e);
  EXPECT_EQ(pd.at("type"), "about:blank");
  EXPECT_EQ(pd.at("status"), 500);
  EXPECT_FALSE(pd.contains("instance"));
}

}  // namespace
}  // namespace hearth::lafs
