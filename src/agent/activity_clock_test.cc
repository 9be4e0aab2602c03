#include "agent/activity_clock.h"

#include <thread>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using std::chrono::milliseconds;

TEST(ActivityClock, CountsEvaluatingProposingAndBothAtOnce) {
  ActivityClock clock;
  clock.ProposalStarted();  // nothing is being evaluated: a call made while the evaluator idles
  std::this_thread::sleep_for(milliseconds(30));
  clock.EvaluationStarted();
  clock.ProposalStarted();  // made while an evaluation runs
  std::this_thread::sleep_for(milliseconds(30));
  clock.ProposalEnded();
  clock.ProposalEnded();
  std::this_thread::sleep_for(milliseconds(30));
  clock.EvaluationEnded();
  const Activity activity = clock.Snapshot();
  EXPECT_EQ(activity.proposals, 2);
  EXPECT_EQ(activity.proposals_while_evaluating, 1);
  // Sleeps last at least as long as asked; the bounds below hold however the threads were scheduled.
  EXPECT_GE(activity.evaluating_s, 0.060);
  EXPECT_GE(activity.proposing_s, 0.060);
  EXPECT_GE(activity.overlapped_s, 0.030);
  EXPECT_LE(activity.overlapped_s, std::min(activity.evaluating_s, activity.proposing_s));
  EXPECT_GE(activity.wall_s, activity.evaluating_s + 0.030) << "the first 30 ms nothing was evaluated";
  EXPECT_LT(activity.evaluating_fraction(), 1.0);
}

TEST(ActivityClock, NothingInFlightCountsNothingButTheWall) {
  ActivityClock clock;
  std::this_thread::sleep_for(milliseconds(10));
  const Activity activity = clock.Snapshot();
  EXPECT_GE(activity.wall_s, 0.010);
  EXPECT_EQ(activity.evaluating_s, 0);
  EXPECT_EQ(activity.proposing_s, 0);
  EXPECT_EQ(activity.overlapped_s, 0);
  EXPECT_EQ(activity.evaluating_fraction(), 0);
}

TEST(Activity, SessionsAddUpAndTheJsonReadsBack) {
  Activity first{10, 6, 5, 2, 4, 2};
  const Activity second{20, 18, 10, 9, 8, 7};
  first += second;
  const Activity read = Activity::FromJson(first.ToJson());
  EXPECT_DOUBLE_EQ(read.wall_s, 30);
  EXPECT_DOUBLE_EQ(read.evaluating_s, 24);
  EXPECT_DOUBLE_EQ(read.proposing_s, 15);
  EXPECT_DOUBLE_EQ(read.overlapped_s, 11);
  EXPECT_EQ(read.proposals, 12);
  EXPECT_EQ(read.proposals_while_evaluating, 9);
  EXPECT_DOUBLE_EQ(first.ToJson()["evaluating_fraction"].get<double>(), 0.8);
  EXPECT_EQ(read.Describe(), "evaluations in flight 80% of 30.0 s (model calls 50%, both at once 37%; 9 of 12 calls made "
                             "while evaluating)");
}

TEST(Activity, AnUnreadableActivityReadsAsNothing) {
  for (const auto& json : {nlohmann::json(), nlohmann::json("busy"), nlohmann::json{{"wall_s", "ten"}, {"proposals", -3}}}) {
    const Activity activity = Activity::FromJson(json);
    EXPECT_EQ(activity.wall_s, 0) << json.dump();
    EXPECT_EQ(activity.proposals, 0) << json.dump();
  }
  EXPECT_EQ(Activity{}.Describe(), "evaluations in flight 0% of 0.0 s");
}

}  // namespace
}  // namespace ksmith
