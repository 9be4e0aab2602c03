// Judging samples on barely changed inputs against the timed median on fresh ones.
#include "eval/reuse_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace ksmith {
namespace {

TEST(ReuseCheck, AnHonestKernelTakesAsLongEitherWay) {
  const ReuseTimes candidate{100, {98, 103, 101, 99, 100}};
  const ReuseTimes baseline{200, {201, 199, 200}};
  EXPECT_FALSE(JudgeReuse(candidate, baseline).has_value());
  EXPECT_DOUBLE_EQ(ReusedMedianUs(candidate), 100);
}

TEST(ReuseCheck, AKernelThatRedoesOnlyWhatChangedIsNamed) {
  const ReuseTimes candidate{100, {20, 22, 21, 19, 20}};
  const ReuseTimes baseline{200, {200, 202, 198}};
  const auto found = JudgeReuse(candidate, baseline);
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(found->find("5.0x faster on inputs that barely changed"), std::string::npos) << *found;
}

TEST(ReuseCheck, WhatTheDeviceDoesToBothSidesIsExcused) {
  // Warm caches make both sides 2x faster on reused inputs: not the candidate's doing.
  const ReuseTimes candidate{100, {50, 50, 50}};
  const ReuseTimes baseline{200, {100, 100, 100}};
  EXPECT_FALSE(JudgeReuse(candidate, baseline).has_value());
  // Beyond what the baseline shows, by more than the limit, it is.
  const ReuseTimes skipping{100, {20, 20, 20}};
  EXPECT_TRUE(JudgeReuse(skipping, baseline).has_value());
}

// Pairs of (fresh, reused) times, `n` of each.
ReuseTimes WithPairs(ReuseTimes times, std::vector<double> fresh, std::vector<double> reused) {
  times.pair_fresh_us = std::move(fresh);
  times.pair_reused_us = std::move(reused);
  return times;
}

std::vector<double> Repeat(const std::vector<double>& pattern, size_t n) {
  std::vector<double> values;
  for (size_t i = 0; i < n; ++i) values.push_back(pattern[i % pattern.size()]);
  return values;
}

TEST(ReuseCheck, LoadThatComesAndGoesIsClearedByBackToBackPairs) {
  // Seen on a loaded 2-core machine: a parallel vector_add's fresh median read 4329 us and its
  // five reused samples 1943 us. Back to back, load slows either call of a pair as often.
  const ReuseTimes suspected{4329, {1943, 1950, 4100, 1900, 2000}};
  const ReuseTimes baseline{1824, {1704, 1800, 1750, 1790, 1760}};
  ASSERT_TRUE(SuspectReuse(suspected, baseline));
  const size_t n = kReuseConfirmPairs;
  const ReuseTimes cleared = WithPairs(suspected, Repeat({4300, 1900, 1950, 4200, 1980}, n),
                                       Repeat({1950, 4250, 1900, 2000, 4100}, n));
  const ReuseTimes baseline_pairs = WithPairs(baseline, Repeat({1800}, n), Repeat({1750}, n));
  EXPECT_FALSE(JudgeReuse(cleared, baseline_pairs).has_value());
}

TEST(ReuseCheck, BackToBackPairsConfirmAKernelThatSkipsWork) {
  const ReuseTimes suspected{100, {20, 22, 21, 19, 20}};
  const ReuseTimes baseline{200, {200, 202, 198}};
  const size_t n = kReuseConfirmPairs;
  const ReuseTimes baseline_pairs = WithPairs(baseline, Repeat({200}, n), Repeat({199}, n));
  // Even with a few pairs spoiled by load, the pattern holds.
  const ReuseTimes confirmed = WithPairs(suspected, Repeat({100, 101, 99, 100, 30}, n), Repeat({20, 21, 60, 20, 20}, n));
  const auto found = JudgeReuse(confirmed, baseline_pairs);
  ASSERT_TRUE(found.has_value());
  EXPECT_NE(found->find("of 15 back-to-back pairs agree"), std::string::npos) << *found;
  // Too few pairs (a backend that takes none): the samples decide.
  const ReuseTimes few = WithPairs(suspected, {100, 100}, {20, 20});
  EXPECT_TRUE(JudgeReuse(few, baseline).has_value());
  EXPECT_TRUE(JudgeReuse(few, baseline_pairs).has_value());
}

TEST(ReuseCheck, PairsNeedAStrongMajorityNotJustTheMedian) {
  const ReuseTimes suspected{100, {20, 22, 21, 19, 20}};
  const size_t n = kReuseConfirmPairs;
  const ReuseTimes baseline = WithPairs({200, {200, 202, 198}}, Repeat({200}, n), Repeat({200}, n));
  // 8 of 15 pairs show it: the median does, two in three do not.
  std::vector<double> reused = Repeat({20}, 8);
  for (size_t i = 8; i < n; ++i) reused.push_back(100);
  EXPECT_FALSE(JudgeReuse(WithPairs(suspected, Repeat({100}, n), reused), baseline).has_value());
  for (size_t i = 8; i < 10; ++i) reused[i] = 20;
  EXPECT_TRUE(JudgeReuse(WithPairs(suspected, Repeat({100}, n), reused), baseline).has_value());
}

TEST(ReuseCheck, TooFewSamplesDecideNothing) {
  EXPECT_FALSE(JudgeReuse({100, {1, 1}}, {100, {100, 100, 100}}).has_value());
  EXPECT_FALSE(JudgeReuse({100, {}}, {100, {}}).has_value());
  EXPECT_DOUBLE_EQ(ReusedMedianUs({100, {}}), 0);
}

}  // namespace
}  // namespace ksmith
