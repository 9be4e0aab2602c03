#include "agent/proposal_review.h"

#include <gtest/gtest.h>

#include "agent/strategy_test_support.h"

namespace ksmith {
namespace {

Attempt Judged(int64_t number, const std::string& status, std::optional<double> speedup) {
  Attempt attempt;
  attempt.candidate_id = 100 + number;
  attempt.number = number;
  attempt.origin = "llm";
  attempt.source = "// kernel " + std::to_string(number);
  attempt.answer = "Words.\n\n```cpp\n" + attempt.source + "\n```\n";
  attempt.status = status;
  attempt.speedup = speedup;
  attempt.verdict.emplace();
  attempt.verdict->status = *ParseVerdictStatus(status);
  attempt.verdict->reason = status;
  if (speedup) attempt.verdict->timing.emplace().speedup.median = *speedup;
  return attempt;
}

Intervention Rollback(size_t after, int64_t to) { return {"rollback", after, std::nullopt, {{"to_candidate", to}}}; }

TEST(WithConstraints, TheyEndTheLastUserMessageInTheOrderGiven) {
  const std::vector<ChatMessage> messages = {{"system", "S"}, {"user", "task"}, {"assistant", "A"}, {"user", "fix it"}};
  EXPECT_EQ(WithConstraints(messages, {}).back().content, "fix it");
  const auto constrained = WithConstraints(messages, {"keep block size 256", "no tensor cores"});
  ASSERT_EQ(constrained.size(), 4u);
  EXPECT_EQ(constrained[1].content, "task");
  EXPECT_EQ(constrained[3].content,
            "fix it\n\nConstraints from the person running this search (every kernel you write must keep to them):\n"
            "- keep block size 256\n- no tensor cores");
}

TEST(RunState, ConstraintsAndRollbacksComeFromTheInterventionsInOrder) {
  RunState state;
  state.interventions = {{"constrain", 0, std::nullopt, {{"constraint", "first"}}},
                         {"approve", 0, 1, nlohmann::json::object()},
                         Rollback(3, 1),
                         {"constrain", 3, std::nullopt, {{"constraint", "second"}}}};
  EXPECT_EQ(state.Constraints(), (std::vector<std::string>{"first", "second"}));
  ASSERT_EQ(state.Rollbacks().size(), 1u);
  EXPECT_EQ(state.Rollbacks()[0].after_attempts, 3u);
  EXPECT_EQ(state.Rollbacks()[0].to_number, 1);
}

TEST(DescribeIntervention, SaysWhatThePersonDidInOneLine) {
  EXPECT_EQ(DescribeIntervention({"approve", 0, 1, nlohmann::json::object()}), "candidate 1 approved as proposed");
  EXPECT_EQ(DescribeIntervention({"edit", 1, 2, {{"diff", "--- proposed\n+++ edited\n@@ -1,2 +1,2 @@\n-a\n+b\n+c\n d\n"}}}),
            "candidate 2 edited before it was judged (+2 -1 lines)");
  EXPECT_EQ(DescribeIntervention({"constrain", 0, std::nullopt, {{"constraint", "no tensor cores"}}}),
            "constraint added: no tensor cores");
  EXPECT_EQ(DescribeIntervention(Rollback(3, 1)), "rolled back to candidate 1 (the proposal was set aside)");
  EXPECT_EQ(DescribeIntervention({"stop", 3, std::nullopt, nlohmann::json::object()}),
            "stopped the run (the proposal was set aside)");
}

class RefineRollback : public ::testing::Test {
 protected:
  std::unique_ptr<Strategy> Refine() {
    StrategyContext context{task_, "cpu", nullptr};
    context.max_attempts = 20;
    auto strategy = MakeStrategy("refine", context);
    EXPECT_TRUE(strategy.ok());
    return std::move(strategy.value());
  }
  const Task task_ = testing::LoadVectorAdd();
};

TEST_F(RefineRollback, TheNextProposalContinuesFromTheKernelRolledBackToThenItsOwnChain) {
  auto refine = Refine();
  EXPECT_TRUE(refine->FollowsRollbacks());
  RunState state;
  state.attempts = {Judged(1, "passed", 1.2), Judged(2, "passed", 1.5), Judged(3, "wrong_output", std::nullopt)};
  state.attempts[1].parent_id = 101;
  state.attempts[2].parent_id = 102;
  // Without a rollback the chain goes on from candidate 3.
  auto steps = refine->Next(state);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].parent_id, std::optional<int64_t>(103));

  state.interventions.push_back(Rollback(3, 1));
  steps = refine->Next(state);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].parent_id, std::optional<int64_t>(101));
  const std::string& last = steps[0].messages.back().content;
  EXPECT_NE(last.find("rolled back to candidate 1"), std::string::npos) << last;
  EXPECT_NE(last.find("// kernel 1"), std::string::npos) << last;
  EXPECT_NE(last.find("Make it faster"), std::string::npos) << last;
  // The chain rolled back from is no longer the conversation: candidate 3's kernel is not shown.
  for (const auto& message : steps[0].messages) EXPECT_EQ(message.content.find("// kernel 3"), std::string::npos);

  // The next kernel starts a chain of its own.
  Attempt fourth = Judged(4, "passed", 1.3);
  fourth.parent_id = 101;
  state.attempts.push_back(fourth);
  steps = refine->Next(state);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].parent_id, std::optional<int64_t>(104));
  EXPECT_EQ(steps[0].messages.back().content.find("rolled back"), std::string::npos);
}

TEST_F(RefineRollback, OtherStrategiesKeepTheirOwnParents) {
  StrategyContext context{task_, "cpu", nullptr};
  auto sample = MakeStrategy("sample", context);
  ASSERT_TRUE(sample.ok());
  EXPECT_FALSE((*sample)->FollowsRollbacks());
}

}  // namespace
}  // namespace ksmith
