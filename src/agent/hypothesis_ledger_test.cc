#include "agent/hypothesis_ledger.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// An attempt of the run that tried `idea`: passed at `speedup`, or failed.
Attempt Tried(const std::string& idea, int64_t number, std::optional<double> speedup) {
  Attempt attempt;
  attempt.number = number;
  attempt.search = {{"hypothesis", idea}};
  attempt.status = speedup ? "passed" : "wrong_output";
  attempt.speedup = speedup;
  return attempt;
}

TEST(HypothesisLedger, AnIdeaThatStopsImprovingIsSetAside) {
  RunState state;
  state.attempts = {Tried("vectorize loads", 1, 1.20), Tried("vectorize loads", 2, 1.50),
                    Tried("vectorize loads", 3, 1.51),  // within 2%: no gain
                    Tried("vectorize loads", 4, 1.40)};
  const HypothesisLedger ledger = HypothesisLedger::FromRun(state);
  ASSERT_EQ(ledger.entries().size(), 1u);
  const Hypothesis& idea = ledger.entries()[0];
  EXPECT_EQ(idea.status, "set aside");
  EXPECT_FALSE(idea.active());
  EXPECT_EQ(idea.best_candidate, 2);
  EXPECT_DOUBLE_EQ(*idea.best_speedup, 1.50);
  EXPECT_EQ(idea.best_attempt, 1u);
  EXPECT_EQ(idea.kernels, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_NE(idea.why.find("2 passing kernels in a row without beating its best (1.50x)"), std::string::npos) << idea.why;
}

TEST(HypothesisLedger, AnIdeaThatNeverPassedBreaksOneThatWorkedIsKept) {
  RunState state;
  state.attempts = {Tried("tensor cores", 1, std::nullopt), Tried("tensor cores", 2, std::nullopt),
                    Tried("tile K", 3, 1.3),                 Tried("tensor cores", 4, std::nullopt),
                    Tried("tile K", 5, std::nullopt),        Tried("tile K", 6, std::nullopt),
                    Tried("tile K", 7, std::nullopt)};
  const HypothesisLedger ledger = HypothesisLedger::FromRun(state);
  ASSERT_EQ(ledger.entries().size(), 2u);
  EXPECT_EQ(ledger.Find("tensor cores")->status, "broken");
  EXPECT_FALSE(ledger.Find("tensor cores")->active());
  const Hypothesis* tile = ledger.Find("tile K");
  EXPECT_EQ(tile->status, "kept");
  EXPECT_TRUE(tile->active());
  EXPECT_NE(tile->why.find("its best (candidate 3, 1.30x) stands"), std::string::npos) << tile->why;
  EXPECT_EQ(ledger.Find("fuse the epilogue"), nullptr);

  // A kept idea built on again and broken as often again is spent: set aside, for a new plan.
  for (int64_t number = 8; number <= 10; ++number) state.attempts.push_back(Tried("tile K", number, std::nullopt));
  const HypothesisLedger later = HypothesisLedger::FromRun(state);
  const Hypothesis* spent = later.Find("tile K");
  ASSERT_NE(spent, nullptr);
  EXPECT_EQ(spent->status, "set aside");
  EXPECT_NE(spent->why.find("its last 6 kernels failed, also when built on its best"), std::string::npos) << spent->why;
}

TEST(HypothesisLedger, PendingAndUnplacedAttemptsAreLeftOutAndTheRenderingSaysItAll) {
  RunState state;
  state.attempts = {Tried("warp shuffles", 1, 2.0), Tried("", 2, 3.0), Tried("warp shuffles", 3, std::nullopt)};
  state.attempts.push_back(Tried("warp shuffles", 4, std::nullopt));
  state.attempts.back().status = "pending";
  const HypothesisLedger ledger = HypothesisLedger::FromRun(state);
  ASSERT_EQ(ledger.entries().size(), 1u);
  EXPECT_EQ(ledger.entries()[0].kernels, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ledger.entries()[0].status, "trying");
  EXPECT_EQ(ledger.Render(), "- \"warp shuffles\": 2 kernels (1, 3), best 2.00x (candidate 1); trying\n");
  const nlohmann::json json = ledger.ToJson();
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["hypothesis"], "warp shuffles");
  EXPECT_EQ(json[0]["best_candidate"], 1);
  EXPECT_TRUE(HypothesisLedger::FromRun(RunState{}).empty());
}

}  // namespace
}  // namespace ksmith
