#include "llm/retry_policy.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicy, RetriesRateLimitsServerErrorsTimeoutsAndLostConnectionsOnly) {
  for (int status : {408, 409, 429, 500, 502, 503, 504, 529}) {
    EXPECT_TRUE(RetryPolicy::Retryable({status, false, std::nullopt})) << status;
  }
  EXPECT_TRUE(RetryPolicy::Retryable({0, false, std::nullopt}));
  EXPECT_TRUE(RetryPolicy::Retryable({200, true, std::nullopt}));
  for (int status : {400, 401, 403, 404, 422}) {
    EXPECT_FALSE(RetryPolicy::Retryable({status, false, std::nullopt})) << status;
  }
}

TEST(RetryPolicy, BacksOffExponentiallyWithFullJitterUpToTheCap) {
  RetryPolicy policy;
  policy.max_attempts = 10;
  const AttemptOutcome busy{503, false, std::nullopt};
  EXPECT_EQ(policy.DelayAfter(1, busy, 0.999), milliseconds(499));
  EXPECT_EQ(policy.DelayAfter(3, busy, 0.5), milliseconds(1000));  // 0.5 * 500 * 2^2
  EXPECT_EQ(policy.DelayAfter(3, busy, 0.0), milliseconds(0));
  EXPECT_EQ(policy.DelayAfter(9, busy, 1.0), policy.max_delay);    // 500 * 2^8 > 60 s
}

TEST(RetryPolicy, HonoursRetryAfterButGivesUpOnAnAbsurdOne) {
  RetryPolicy policy;
  EXPECT_EQ(policy.DelayAfter(1, {429, false, milliseconds(3000)}, 0.1), milliseconds(3000));
  EXPECT_EQ(policy.DelayAfter(1, {429, false, milliseconds(3'600'000)}, 0.1), std::nullopt);
}

TEST(RetryPolicy, StopsAfterTheLastAttemptAndOnPermanentErrors) {
  RetryPolicy policy;
  policy.max_attempts = 3;
  EXPECT_TRUE(policy.DelayAfter(2, {500, false, std::nullopt}, 0.5).has_value());
  EXPECT_EQ(policy.DelayAfter(3, {500, false, std::nullopt}, 0.5), std::nullopt);
  EXPECT_EQ(policy.DelayAfter(1, {401, false, std::nullopt}, 0.5), std::nullopt);
}

TEST(RetryPolicy, ParsesRetryAfterSecondsOnly) {
  EXPECT_EQ(ParseRetryAfter("30"), milliseconds(30'000));
  EXPECT_EQ(ParseRetryAfter(" 2 "), milliseconds(2000));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-5"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter(""), std::nullopt);
}

}  // namespace
}  // namespace ksmith
