// The team strategy's turns, driven by hand: each Next is answered as the loop would record it
// (a note for the planner and the judge, an attempt for the coder and the debugger).
#include <gtest/gtest.h>

#include "agent/hypothesis_ledger.h"
#include "agent/optimize_loop.h"
#include "agent/strategy.h"
#include "agent/strategy_test_support.h"
#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

using testing::LoadVectorAdd;

class TeamTurns : public ::testing::Test {
 protected:
  void SetUp() override {
    StrategyContext context{task_, "cpu", nullptr};
    context.max_attempts = 100;
    auto strategy = MakeStrategy("team", context);
    ASSERT_TRUE(strategy.ok());
    strategy_ = std::move(strategy.value());
  }

  // Asks for the next step and checks whose turn it is.
  Step Expect(const std::string& role) {
    auto steps = strategy_->Next(state_);
    EXPECT_EQ(steps.size(), 1u);
    if (steps.empty()) return {};
    EXPECT_EQ(steps[0].role, role) << steps[0].search.dump();
    EXPECT_EQ(steps[0].writes_kernel, role == "coder" || role == "debugger");
    return steps[0];
  }
  void Answer(const Step& step, const std::string& content) {
    state_.notes.push_back({step.role, content, state_.attempts.size()});
  }
  // The kernel of `step` judged: passed at `speedup`, failed, or with no kernel in the answer.
  void Judged(const Step& step, std::optional<double> speedup, bool extracted = true) {
    Attempt attempt;
    attempt.number = static_cast<int64_t>(state_.attempts.size()) + 1;
    attempt.candidate_id = 100 + attempt.number;
    attempt.role = step.role;
    attempt.search = step.search;
    attempt.parent_id = step.parent_id;
    if (!extracted) {
      attempt.status = "extraction_failed";
      attempt.extraction_error = "no code block in the answer";
      state_.attempts.push_back(std::move(attempt));
      return;
    }
    attempt.source = "// kernel " + std::to_string(attempt.number) + "\n";
    Verdict& verdict = attempt.verdict.emplace();
    if (speedup) {
      verdict.status = VerdictStatus::kPassed;
      attempt.status = "passed";
      attempt.speedup = speedup;
      Timing& timing = verdict.timing.emplace();
      timing.speedup = {*speedup, *speedup, *speedup};
      timing.candidate_us.median = 100 / *speedup;
    } else {
      verdict.status = VerdictStatus::kCompileError;
      verdict.reason = "error: 'undefined_thing' was not declared";
      attempt.status = "compile_error";
    }
    state_.attempts.push_back(std::move(attempt));
  }
  std::string Prompt(const Step& step) const { return step.messages.back().content; }

  const Task task_ = LoadVectorAdd();
  std::unique_ptr<Strategy> strategy_;
  RunState state_;
};

TEST_F(TeamTurns, PlanCodeDebugThenABrokenIdeaGoesBackToThePlanner) {
  EXPECT_EQ(strategy_->name(), "team");
  EXPECT_TRUE(strategy_->needs_model());
  Answer(Expect("planner"), "Hypothesis: tensor cores\nUse wmma.");
  const Step coder = Expect("coder");
  EXPECT_EQ(coder.search["hypothesis"], "tensor cores");
  EXPECT_EQ(coder.search["operator"], "plan");
  EXPECT_NE(Prompt(coder).find("Use wmma."), std::string::npos);
  Judged(coder, std::nullopt);
  // The debugger fixes it with the verdict's facts, keeping the idea; twice.
  for (int repair = 0; repair < 2; ++repair) {
    const Step debugger = Expect("debugger");
    EXPECT_EQ(debugger.search["hypothesis"], "tensor cores");
    EXPECT_EQ(debugger.parent_id, state_.attempts.back().candidate_id);
    EXPECT_NE(Prompt(debugger).find("undefined_thing"), std::string::npos) << Prompt(debugger);
    Judged(debugger, std::nullopt);
  }
  // Three failures: the idea broke; the planner sees that in the ledger.
  const Step planner = Expect("planner");
  EXPECT_NE(Prompt(planner).find("\"tensor cores\": 3 kernels (1, 2, 3), none passed; broken"), std::string::npos)
      << Prompt(planner);
}

TEST_F(TeamTurns, TheJudgeContinuesAnIdeaUntilTheLedgerSetsItAsideThenStops) {
  Answer(Expect("planner"), "Hypothesis: vectorize loads\nfloat4.");
  Judged(Expect("coder"), 1.5);
  const Step judge = Expect("judge");
  EXPECT_NE(Prompt(judge).find("Decision: continue"), std::string::npos);
  EXPECT_NE(Prompt(judge).find("candidate 1: 66.7 us, 1.50x"), std::string::npos) << Prompt(judge);
  Answer(judge, "Decision: continue\nUnroll by 4.");
  const Step more = Expect("coder");
  EXPECT_EQ(more.search["operator"], "continue");
  EXPECT_EQ(more.parent_id, 101);
  EXPECT_NE(Prompt(more).find("Unroll by 4."), std::string::npos);
  Judged(more, 1.49);  // no gain
  Answer(Expect("judge"), "Decision: continue\nTry 8.");
  Judged(Expect("coder"), 1.45);  // no gain again: set aside, whatever the judge would say
  const Step planner = Expect("planner");
  EXPECT_NE(Prompt(planner).find("set aside"), std::string::npos) << Prompt(planner);
  EXPECT_NE(Prompt(planner).find("The fastest correct kernel so far"), std::string::npos);
  Answer(planner, "**Hypothesis:** fewer passes\nFuse.");
  // An answer without a kernel: the coder is asked again, with why.
  Judged(Expect("coder"), std::nullopt, /*extracted=*/false);
  const Step retry = Expect("coder");
  EXPECT_EQ(retry.search["operator"], "retry");
  EXPECT_NE(Prompt(retry).find("no code block in the answer"), std::string::npos);
  Judged(retry, 1.9);
  Answer(Expect("judge"), "Decision: stop\nAt 95% of the memory bandwidth.");
  EXPECT_TRUE(strategy_->Next(state_).empty());
  EXPECT_EQ(strategy_->FinishedBecause(state_), "the judge stopped: At 95% of the memory bandwidth.");
  const HypothesisLedger ledger = HypothesisLedger::FromRun(state_);
  ASSERT_EQ(ledger.entries().size(), 2u);
  EXPECT_EQ(ledger.entries()[1].name, "fewer passes");
  EXPECT_EQ(ledger.entries()[1].best_candidate, 5);
}

TEST_F(TeamTurns, TheJudgeMaySwitchIdeas) {
  Answer(Expect("planner"), "Hypothesis: shared memory\n...");
  Judged(Expect("coder"), 1.1);
  Answer(Expect("judge"), "Decision: switch\nThe kernel is latency-bound.");
  const Step planner = Expect("planner");
  EXPECT_NE(Prompt(planner).find("The kernel is latency-bound."), std::string::npos);
}

TEST(TeamResume, PlansAndJudgmentsReadBackFromTheStoreInTheirPlaceAmongTheCandidates) {
  ksmith::testing::StoreFolder folder;
  auto store = folder.Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateRun(ksmith::testing::SampleRun("r1"), ksmith::testing::kSampleTaskToml).ok());
  // As the loop records a team's turns: the plan (a call alone), the coder's kernel (a call and
  // its candidate), the judgment (a call alone), and a planner call that failed (no note).
  auto call = [&store](const std::string& role, const std::string& content, bool answered = true) {
    LlmCall made = ksmith::testing::SampleCall(content);
    made.role = role;
    if (!answered) {
      made.reply.reset();
      made.error = "HTTP 500";
    }
    auto id = store->AddLlmCall("r1", made);
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : int64_t{0};
  };
  call("planner", "Hypothesis: unroll\nBy 4.");
  CandidateRecord record;
  record.run_id = "r1";
  record.origin = "llm";
  record.role = "coder";
  record.source = "// kernel\n";
  record.search = {{"operator", "plan"}, {"hypothesis", "unroll"}};
  record.llm_call_id = call("coder", "```cpp\n// kernel\n```");
  ASSERT_TRUE(store->AddCandidate(record, &record.sequence).ok());
  call("judge", "Decision: switch\nSpent.");
  call("planner", "", /*answered=*/false);
  auto loaded = LoadRunState(*store, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->attempts.size(), 1u);
  ASSERT_EQ(loaded->notes.size(), 2u);
  EXPECT_EQ(loaded->notes[0].role, "planner");
  EXPECT_EQ(loaded->notes[0].after_attempts, 0u);
  EXPECT_EQ(loaded->notes[1].role, "judge");
  EXPECT_EQ(loaded->notes[1].after_attempts, 1u);
  EXPECT_EQ(loaded->notes[1].content, "Decision: switch\nSpent.");
}

}  // namespace
}  // namespace ksmith
