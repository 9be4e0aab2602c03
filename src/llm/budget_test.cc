#include "llm/budget.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

TEST(Budget, CountsTokensAndTheirPrice) {
  Budget budget({}, {3.0, 15.0}, Clock::now());
  budget.ChargeCall(1'000'000, 200'000);
  budget.ChargeCall(-5, 0);  // a server reporting nonsense charges nothing
  EXPECT_EQ(budget.tokens(), 1'200'000);
  EXPECT_DOUBLE_EQ(budget.dollars(), 3.0 + 3.0);
  EXPECT_EQ(budget.ToJson()["cost_dollars"], 6.0);
}

TEST(Budget, EachLimitStopsTheRunAndSaysWhich) {
  const auto start = Clock::now();
  Budget tokens({100, std::nullopt, std::nullopt, std::nullopt}, {}, start);
  EXPECT_FALSE(tokens.Exhausted(start));
  tokens.ChargeCall(60, 50);
  ASSERT_TRUE(tokens.Exhausted(start));
  EXPECT_NE(tokens.Exhausted(start)->find("token budget of 100"), std::string::npos);

  Budget dollars({std::nullopt, 1.0, std::nullopt, std::nullopt}, {10.0, 10.0}, start);
  dollars.ChargeCall(50'000, 49'999);
  EXPECT_FALSE(dollars.Exhausted(start));
  dollars.ChargeCall(0, 1);
  EXPECT_NE(dollars.Exhausted(start).value_or("").find("$1.00"), std::string::npos);

  Budget candidates({std::nullopt, std::nullopt, 2, std::nullopt}, {}, start);
  candidates.ChargeCandidate();
  EXPECT_FALSE(candidates.Exhausted(start));
  candidates.ChargeCandidate();
  EXPECT_NE(candidates.Exhausted(start).value_or("").find("2 candidates"), std::string::npos);

  Budget wall({std::nullopt, std::nullopt, std::nullopt, seconds(60)}, {}, start);
  EXPECT_FALSE(wall.Exhausted(start + seconds(59)));
  EXPECT_NE(wall.Exhausted(start + seconds(60)).value_or("").find("60 s"), std::string::npos);
}

TEST(Budget, NoLimitsNeverStops) {
  Budget budget({}, {1.0, 1.0}, Clock::now());
  budget.ChargeCall(1'000'000'000, 1'000'000'000);
  for (int i = 0; i < 1000; ++i) budget.ChargeCandidate();
  EXPECT_FALSE(budget.Exhausted(Clock::now() + std::chrono::hours(100)));
}

}  // namespace
}  // namespace ksmith
