// Judging samples on barely changed inputs against the timed median on fresh ones.
#include "eval/reuse_check.h"

#include <gtest/gtest.h>

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

TEST(ReuseCheck, TooFewSamplesDecideNothing) {
  EXPECT_FALSE(JudgeReuse({100, {1, 1}}, {100, {100, 100, 100}}).has_value());
  EXPECT_FALSE(JudgeReuse({100, {}}, {100, {}}).has_value());
  EXPECT_DOUBLE_EQ(ReusedMedianUs({100, {}}), 0);
}

}  // namespace
}  // namespace ksmith
