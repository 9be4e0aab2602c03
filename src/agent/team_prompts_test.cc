#include "agent/team_prompts.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

TEST(TeamPrompts, TheHypothesisIsReadFromHowModelsWriteIt) {
  EXPECT_EQ(ParseHypothesis("Hypothesis: vectorize the loads\nUse float4."), "vectorize the loads");
  EXPECT_EQ(ParseHypothesis("**Hypothesis:** Tile the K loop.\n1. ..."), "Tile the K loop");
  EXPECT_EQ(ParseHypothesis("Some preamble.\n- hypothesis: `warp shuffles`\n"), "warp shuffles");
  EXPECT_EQ(ParseHypothesis("\n\n## Fuse the epilogue into the GEMM\nthen..."), "Fuse the epilogue into the GEMM");
  EXPECT_EQ(ParseHypothesis(""), "unnamed idea");
  EXPECT_EQ(ParseHypothesis("Hypothesis: " + std::string(200, 'x')).size(), 80u);
}

TEST(TeamPrompts, TheDecisionIsReadLenientlyAndContinueIsTheDefault) {
  EXPECT_EQ(ParseDecision("Decision: stop\nAt 92% of HBM bandwidth."), "stop");
  EXPECT_EQ(ParseDecision("**Decision:** Switch, the idea is spent"), "switch");
  EXPECT_EQ(ParseDecision("decision: CONTINUE\nunroll by 4"), "continue");
  EXPECT_EQ(ParseDecision("I think we should keep going."), "continue");
  EXPECT_EQ(JudgmentAdvice("Decision: continue\nUnroll by 4.\nKeep float4."), "Unroll by 4.\nKeep float4.");
}

TEST(TeamPrompts, ThePlannerSeesTheLedgerAndTheJudgeHowToAnswer) {
  const std::string plan = PlannerInstruction("- \"tile K\": 2 kernels (1, 2), none passed; broken: ...\n", nullptr,
                                              "Decision: switch\nThe loads are the bottleneck.");
  EXPECT_NE(plan.find("No kernel has passed yet."), std::string::npos);
  EXPECT_NE(plan.find("\"tile K\""), std::string::npos);
  EXPECT_NE(plan.find("The loads are the bottleneck."), std::string::npos);
  EXPECT_NE(plan.find("Hypothesis: <the idea in a few words>"), std::string::npos);
  EXPECT_NE(PlannerSystemPrompt("cuda").find("You never write code."), std::string::npos);
  EXPECT_NE(CoderInstruction("tile K", "Use 64x64 tiles.", nullptr).find("\"tile K\"\nUse 64x64 tiles."), std::string::npos);
}

}  // namespace
}  // namespace ksmith
