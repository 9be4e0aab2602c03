#include "agent/strategy.h"

#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "agent/strategy_test_support.h"

namespace ksmith {
namespace {

using testing::LoadVectorAdd;

const std::string kTunable = testing::TunableVectorAdd("64, 128");

Attempt Failed(int64_t id, const std::string& status, const std::string& reason) {
  Attempt attempt;
  attempt.candidate_id = id;
  attempt.origin = "llm";
  attempt.answer = "```cpp\n// attempt " + std::to_string(id) + "\n```";
  attempt.source = "// attempt " + std::to_string(id);
  attempt.status = status;
  attempt.verdict.emplace();
  attempt.verdict->status = *ParseVerdictStatus(status);
  attempt.verdict->reason = reason;
  if (status == "passed") return attempt;
  // What failed, as the pipeline records it: a compile error's first diagnostic is the reason.
  StageRecord stage{status == "compile_error" ? "build" : "correctness", "failed", 0, {}, 0};
  if (status == "compile_error") {
    stage.details.diagnostics.push_back({"src/candidate.cpp", 1, reason, {}});
  } else {
    stage.details.MutableFailure(*ParseVerdictStatus(status) == VerdictStatus::kWrongOutput ? FailureKind::kWrongOutput
                                                                                           : FailureKind::kUnspecified);
  }
  attempt.verdict->stages.push_back(std::move(stage));
  return attempt;
}

Attempt Passed(int64_t id, double speedup) {
  Attempt attempt = Failed(id, "passed", "passed");
  attempt.speedup = speedup;
  attempt.verdict->timing.emplace().speedup.median = speedup;
  return attempt;
}

std::string LastUserMessage(const Step& step) {
  EXPECT_FALSE(step.messages.empty());
  return step.messages.empty() ? std::string() : step.messages.back().content;
}

TEST(RunState, BestIsThePassingAttemptWithTheHighestSpeedup) {
  RunState state;
  EXPECT_EQ(state.Best(), nullptr);
  state.attempts = {Passed(1, 1.5), Failed(2, "wrong_output", "max error 3"), Passed(3, 2.5), Passed(4, 0.9)};
  ASSERT_NE(state.Best(), nullptr);
  EXPECT_EQ(state.Best()->candidate_id, 3);
}

TEST(TuneStrategy, WalksEverySettingOnceAndSkipsThoseAlreadyTried) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  context.tune_source = kTunable;
  context.max_attempts = 100;
  auto strategy = MakeStrategy("tune", context);
  ASSERT_TRUE(strategy.ok()) << strategy.error().message;
  // Two BLOCK values times three UNROLL values: known up front, so a run can say when it ends.
  EXPECT_EQ((*strategy)->Capacity(), std::optional<size_t>(6));
  ASSERT_TRUE(strategy.ok()) << strategy.error().message;
  EXPECT_FALSE((*strategy)->needs_model());
  RunState state;
  std::set<std::string> seen;
  std::vector<size_t> batches;
  for (int i = 0; i < 10; ++i) {
    auto steps = (*strategy)->Next(state);
    if (steps.empty()) break;
    batches.push_back(steps.size());
    for (const auto& step : steps) {
      EXPECT_FALSE(step.asks_model());
      EXPECT_EQ(step.origin, "tune");
      EXPECT_NE(step.source.find("#define BLOCK"), std::string::npos);
      Attempt attempt;
      attempt.candidate_id = static_cast<int64_t>(state.attempts.size()) + 1;
      for (const auto& [name, value] : step.knobs) attempt.knobs[name] = value;
      EXPECT_TRUE(seen.insert(attempt.knobs.dump()).second) << "repeated " << attempt.knobs.dump();
      attempt.status = "passed";
      state.attempts.push_back(attempt);
    }
  }
  EXPECT_EQ(seen.size(), 6u);  // 2 x 3 settings, then nothing left
  // Settings are independent: they come `parallel` (4) at a time, to be evaluated side by side.
  EXPECT_EQ(batches, (std::vector<size_t>{4, 2}));
  EXPECT_TRUE((*strategy)->Next(state).empty());
}

TEST(TuneStrategy, RefusesAKernelWithoutKnobs) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  context.tune_source = "extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {}";
  auto strategy = MakeStrategy("tune", context);
  ASSERT_FALSE(strategy.ok());
  EXPECT_NE(strategy.error().message.find("@tune"), std::string::npos);
}

TEST(SampleStrategy, ProposesIndependentBatchesUpToTheLimit) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  context.max_attempts = 6;
  context.parallel = 4;
  auto strategy = MakeStrategy("sample", context);
  ASSERT_TRUE(strategy.ok());
  RunState state;
  auto first = (*strategy)->Next(state);
  ASSERT_EQ(first.size(), 4u);
  for (const auto& step : first) {
    EXPECT_TRUE(step.asks_model());
    EXPECT_FALSE(step.parent_id.has_value());
    EXPECT_EQ(step.messages.size(), 2u);  // system and task only: nothing leaks between samples
  }
  for (int i = 0; i < 4; ++i) state.attempts.push_back(Failed(i + 1, "wrong_output", "x"));
  EXPECT_EQ((*strategy)->Next(state).size(), 2u);
  for (int i = 4; i < 6; ++i) state.attempts.push_back(Failed(i + 1, "wrong_output", "x"));
  EXPECT_TRUE((*strategy)->Next(state).empty());
}

TEST(RefineStrategy, ContinuesFromTheLastAttemptWithItsFeedback) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  auto strategy = MakeStrategy("refine", context);
  ASSERT_TRUE(strategy.ok());
  RunState state;
  auto first = (*strategy)->Next(state);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].parent_id.has_value());
  state.attempts.push_back(Failed(7, "compile_error", "compile error: 'foo' was not declared in this scope"));
  auto second = (*strategy)->Next(state);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].parent_id, 7);
  EXPECT_NE(LastUserMessage(second[0]).find("Fix it"), std::string::npos);
  bool answer_shown = false;
  for (const auto& message : second[0].messages) answer_shown |= message.role == "assistant" && message.content.find("attempt 7") != std::string::npos;
  EXPECT_TRUE(answer_shown);
}

TEST(RefineStrategy, BreaksAnErrorCycleByRestartingFromTheBest) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  auto strategy = MakeStrategy("refine", context);
  ASSERT_TRUE(strategy.ok());
  RunState state;
  state.attempts.push_back(Passed(1, 1.2));
  // The same mistake three times; only the line number changes.
  for (int i = 0; i < 3; ++i) {
    state.attempts.push_back(Failed(2 + i, "compile_error", "line " + std::to_string(10 + i) + ": 'tile' was not declared"));
  }
  auto steps = (*strategy)->Next(state);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].parent_id, 1);  // back to the best
  const std::string last = LastUserMessage(steps[0]);
  EXPECT_NE(last.find("failed the same way"), std::string::npos) << last;
  EXPECT_NE(last.find("different approach"), std::string::npos);
  // The failing chain is gone from the conversation; the best kernel is kept.
  std::string all;
  for (const auto& message : steps[0].messages) all += message.content;
  EXPECT_EQ(all.find("attempt 3"), std::string::npos);
  EXPECT_NE(all.find("attempt 1"), std::string::npos);

  // A different failure after the restart is not a cycle.
  state.attempts.push_back(Failed(5, "wrong_output", "max error 0.5 at 3"));
  auto after = (*strategy)->Next(state);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].parent_id, 5);
  EXPECT_EQ(LastUserMessage(after[0]).find("failed the same way"), std::string::npos);
}

TEST(RefineStrategy, StopsAtTheAttemptLimit) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  context.max_attempts = 2;
  auto strategy = MakeStrategy("refine", context);
  ASSERT_TRUE(strategy.ok());
  RunState state;
  state.attempts = {Failed(1, "wrong_output", "a"), Failed(2, "wrong_output", "b")};
  EXPECT_TRUE((*strategy)->Next(state).empty());
}

TEST(MakeStrategy, UnknownNamesAreExplained) {
  const Task task = LoadVectorAdd();
  StrategyContext context{task, "cpu", nullptr};
  auto strategy = MakeStrategy("anneal", context);
  ASSERT_FALSE(strategy.ok());
  EXPECT_NE(strategy.error().message.find("refine, sample, tune, evolve or team"), std::string::npos) << strategy.error().message;
}

}  // namespace
}  // namespace ksmith
