#include "server/reward.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

TEST(ComputeReward, FollowsDrKernelsRuleForAPassedVerdict) {
  const RewardRule rule;
  // Native candidates run only their own code: the coverage term is whole.
  const Reward native = ComputeReward(rule, json{{"status", "passed"}, {"speedup", 2.0}});
  EXPECT_DOUBLE_EQ(native.value, 0.5 + 0.5 * 2.0 + 0.5);
  EXPECT_EQ(native.parts.at("coverage_source"), "own code by contract");
  // The speedup is capped at 3.
  EXPECT_DOUBLE_EQ(ComputeReward(rule, json{{"status", "passed"}, {"speedup", 40.0}}).value, 0.5 + 1.5 + 0.5);
  // CUPTI's share of GPU time in the candidate's own kernels scales the coverage term.
  const Reward lazy = ComputeReward(
      rule, json{{"status", "passed"}, {"speedup", 1.0}, {"kernel_time_share", {{"share", 0.2}}}});
  EXPECT_DOUBLE_EQ(lazy.value, 0.5 + 0.5 + 0.1);
  EXPECT_EQ(lazy.parts.at("coverage_source"), "cupti");
  // Untimed: correct and coverage only.
  EXPECT_DOUBLE_EQ(ComputeReward(rule, json{{"status", "passed"}}).value, 1.0);
  // A ModelNew nobody attributed (the cpu): its coverage is not assumed.
  const Reward unmeasured =
      ComputeReward(rule, json{{"status", "passed"}, {"speedup", 1.0}, {"generalization", {{"generalizes", true}}}});
  EXPECT_DOUBLE_EQ(unmeasured.value, 1.0);
  EXPECT_EQ(unmeasured.parts.at("coverage_source"), "unmeasured");
}

TEST(ComputeReward, FailuresTorchOnlyAndHacksEarnTheirOwnValues) {
  const RewardRule rule;
  for (const char* status : {"compile_error", "runtime_error", "timeout", "wrong_output"}) {
    EXPECT_DOUBLE_EQ(ComputeReward(rule, json{{"status", status}}).value, 0.0) << status;
  }
  EXPECT_DOUBLE_EQ(ComputeReward(rule, json{{"status", "integrity_violation"}, {"speedup", 20.0}}).value, -1.0);
  EXPECT_DOUBLE_EQ(ComputeReward(rule, json{{"status", "infra_error"}}).value, 0.0);
  const json torch_only = {{"status", "passed"},
                           {"speedup", 1.3},
                           {"labels", {"no custom kernel (CUPTI: none of its 4 checked runs launched a kernel)"}}};
  EXPECT_DOUBLE_EQ(ComputeReward(rule, torch_only).value, 0.0);
  EXPECT_EQ(ComputeReward(rule, torch_only).parts.at("rule"), "no_custom_kernel");
}

TEST(RewardRule, ReadsTheRewardTableAndNamesABadKey) {
  ScopedTempDir dir("ksmith-reward-test");
  const auto path = dir.path() / "ksmith.toml";
  std::ofstream(path) << "[eval]\nseeds = 2\n[reward]\nspeedup_cap = 2\nintegrity_violation = -2.5\n";
  auto rule = RewardRule::FromConfigFile(path);
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  EXPECT_DOUBLE_EQ(rule->speedup_cap, 2.0);
  EXPECT_DOUBLE_EQ(rule->integrity_violation, -2.5);
  EXPECT_DOUBLE_EQ(rule->correct, 0.5);
  EXPECT_DOUBLE_EQ(ComputeReward(*rule, json{{"status", "passed"}, {"speedup", 5.0}}).value, 0.5 + 1.0 + 0.5);

  std::ofstream(path) << "[reward]\nspeedup_weight = 1\nbonus = 3\n";
  auto unknown = RewardRule::FromConfigFile(path);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("[reward] bonus: unknown key"), std::string::npos) << unknown.error().message;

  std::ofstream(path) << "[reward]\ncorrect = \"lots\"\n";
  auto wrong_type = RewardRule::FromConfigFile(path);
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.error().message.find("correct must be a number"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
