#include "eval/timing_driver.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// Walks a round's steps: which inputs each call saw (a counter that a move of the inputs bumps),
// and which inputs the baseline had answered when the candidate ran.
struct Walk {
  int candidate_calls = 0;
  int baseline_timed_calls = 0;
  bool candidate_saw_answered_inputs = false;
  bool checked_on_the_candidates_inputs = false;
  bool caches_dropped_between_sides = false;
};

Walk WalkRound(const std::vector<RoundStep>& steps) {
  Walk walk;
  int inputs = 0;
  int answered = -1;   // the inputs the baseline last ran on
  int candidate = -1;  // the inputs the candidate ran on
  bool timed_side_done = false;
  for (const RoundStep step : steps) {
    switch (step) {
      case RoundStep::kCandidate:
        ++walk.candidate_calls;
        walk.candidate_saw_answered_inputs |= answered == inputs;
        candidate = inputs;
        break;
      case RoundStep::kBaseline:
        ++walk.baseline_timed_calls;
        answered = inputs;
        break;
      case RoundStep::kBaselineUntimed:
        answered = inputs;
        break;
      case RoundStep::kMoveInputs:
        ++inputs;
        if (timed_side_done) walk.caches_dropped_between_sides = true;
        break;
      case RoundStep::kEvict:
        if (timed_side_done) walk.caches_dropped_between_sides = true;
        break;
    }
    timed_side_done = walk.candidate_calls + walk.baseline_timed_calls > 0;
  }
  walk.checked_on_the_candidates_inputs = answered == candidate;
  return walk;
}

// Whatever the secret order, a round times each side once, compares them on the same inputs,
// and never lets the candidate run on fresh inputs that the baseline has just answered.
TEST(PlanRound, TheCandidateNeverRunsOnFreshInputsTheBaselineHasAnswered) {
  for (const bool candidate_first : {true, false}) {
    for (const bool evict : {true, false}) {
      const Walk walk = WalkRound(PlanRound(candidate_first, /*tweak=*/false, evict));
      SCOPED_TRACE(testing::Message() << "candidate first " << candidate_first << ", evict " << evict);
      EXPECT_EQ(walk.candidate_calls, 1);
      EXPECT_EQ(walk.baseline_timed_calls, 1);
      EXPECT_FALSE(walk.candidate_saw_answered_inputs);
      EXPECT_TRUE(walk.checked_on_the_candidates_inputs);
      if (evict) EXPECT_TRUE(walk.caches_dropped_between_sides);
    }
  }
}

// A round on barely changed inputs keeps them for both sides: it measures reuse.
TEST(PlanRound, ARoundOnBarelyChangedInputsKeepsThemForBothSides) {
  for (const bool candidate_first : {true, false}) {
    const auto steps = PlanRound(candidate_first, /*tweak=*/true, /*evict_between_sides=*/true);
    EXPECT_EQ(std::count(steps.begin(), steps.end(), RoundStep::kMoveInputs), 0);
    EXPECT_EQ(std::count(steps.begin(), steps.end(), RoundStep::kBaselineUntimed), 0);
    const Walk walk = WalkRound(steps);
    EXPECT_EQ(walk.candidate_calls, 1);
    EXPECT_EQ(walk.baseline_timed_calls, 1);
    EXPECT_TRUE(walk.checked_on_the_candidates_inputs);
    EXPECT_TRUE(walk.caches_dropped_between_sides);
  }
}

}  // namespace
}  // namespace ksmith
