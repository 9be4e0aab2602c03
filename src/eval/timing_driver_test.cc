#include "eval/timing_driver.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// Walks a round's steps over two sets (the round's, the spare): which inputs each call saw (a
// number that a move of a set's inputs changes), which the baseline had answered when the
// candidate ran, and what the check compared.
struct Walk {
  int candidate_timed = 0;
  int baseline_timed = 0;
  bool candidate_saw_answered_inputs = false;
  bool checked_the_timed_candidate_output = false;  // against the baseline on the same inputs
  bool second_side_on_moved_inputs = false;
  bool second_side_on_rewritten_or_moved_inputs = false;
  bool caches_dropped_between_sides = false;
  bool ends_with_candidate = false;  // the round's last call
  int candidate_untimed = 0;
  int baseline_untimed = 0;
};

Walk WalkRound(const std::vector<RoundStep>& steps) {
  Walk walk;
  int next_inputs = 2;
  int inputs[2] = {0, 1};             // per set
  std::set<int> answered;             // inputs the baseline has run on
  int candidate_inputs[2] = {-1, -1};  // per set: the inputs of the candidate's timed output there
  int baseline_inputs[2] = {-1, -1};   // per set: the inputs of the baseline's output there
  bool touched[2] = {false, false};   // moved or rewritten since the round began
  bool moved[2] = {false, false};
  bool checked = false;
  for (const RoundStep& step : steps) {
    const int set = step.spare ? 1 : 0;
    const bool second = walk.candidate_timed + walk.baseline_timed == 1;
    switch (step.kind) {
      case RoundStep::kCandidate:
        ++walk.candidate_timed;
        walk.candidate_saw_answered_inputs |= answered.count(inputs[set]) > 0;
        candidate_inputs[set] = inputs[set];
        walk.ends_with_candidate = true;
        if (second) {
          walk.second_side_on_moved_inputs = moved[set];
          walk.second_side_on_rewritten_or_moved_inputs = touched[set];
        }
        break;
      case RoundStep::kBaseline:
      case RoundStep::kBaselineUntimed:
        if (step.kind == RoundStep::kBaseline) {
          ++walk.baseline_timed;
          if (second) {
            walk.second_side_on_moved_inputs = moved[set];
            walk.second_side_on_rewritten_or_moved_inputs = touched[set];
          }
        }
        if (step.kind == RoundStep::kBaselineUntimed) ++walk.baseline_untimed;
        answered.insert(inputs[set]);
        baseline_inputs[set] = inputs[set];
        walk.ends_with_candidate = false;
        break;
      case RoundStep::kCandidateUntimed:
        EXPECT_TRUE(checked || candidate_inputs[set] < 0)
            << "an untimed candidate call where the timed one wrote, before the check, would replace its output";
        ++walk.candidate_untimed;
        walk.ends_with_candidate = true;
        break;
      case RoundStep::kMoveInputs:
        inputs[set] = next_inputs++;
        moved[set] = touched[set] = true;
        if (walk.candidate_timed + walk.baseline_timed > 0) walk.caches_dropped_between_sides = true;
        break;
      case RoundStep::kRewriteInputs:
        touched[set] = true;
        [[fallthrough]];
      case RoundStep::kEvict:
        if (walk.candidate_timed + walk.baseline_timed > 0) walk.caches_dropped_between_sides = true;
        break;
      case RoundStep::kCheck:
        checked = true;
        walk.checked_the_timed_candidate_output = candidate_inputs[set] >= 0 &&
                                                  candidate_inputs[set] == baseline_inputs[set] &&
                                                  walk.candidate_timed == 1 && walk.baseline_timed == 1;
        break;
    }
  }
  EXPECT_TRUE(checked);
  return walk;
}

// Whatever the secret order, a round on fresh inputs times each side once, checks the candidate's
// timed output against the baseline on the same inputs, and never lets the candidate run on
// inputs the baseline has answered.
TEST(PlanRound, TheCandidateNeverRunsOnFreshInputsTheBaselineHasAnswered) {
  for (const bool spare : {true, false}) {
    for (const bool candidate_first : {true, false}) {
      for (const bool evict : {true, false}) {
        SCOPED_TRACE(testing::Message() << "spare " << spare << ", candidate first " << candidate_first << ", evict "
                                        << evict);
        const Walk walk = WalkRound(PlanRound(candidate_first, /*tweak=*/false, spare, evict));
        EXPECT_EQ(walk.candidate_timed, 1);
        EXPECT_EQ(walk.baseline_timed, 1);
        EXPECT_FALSE(walk.candidate_saw_answered_inputs);
        EXPECT_TRUE(walk.checked_the_timed_candidate_output);
        EXPECT_TRUE(walk.caches_dropped_between_sides);
      }
    }
  }
}

// The second side's call follows the same memory traffic in either order: with a spare set it
// always runs on inputs just moved there; without, on inputs moved or written back.
TEST(PlanRound, TheSecondSideFindsTheSameInEitherOrder) {
  for (const bool candidate_first : {true, false}) {
    EXPECT_TRUE(WalkRound(PlanRound(candidate_first, false, true, true)).second_side_on_moved_inputs);
    EXPECT_TRUE(WalkRound(PlanRound(candidate_first, false, false, true)).second_side_on_rewritten_or_moved_inputs);
  }
}

// A round on barely changed inputs keeps them for both sides, as it must to measure reuse, and
// the candidate goes first: the baseline's exact answer is not there yet.
TEST(PlanRound, ARoundOnBarelyChangedInputsKeepsThemForBothSides) {
  for (const bool candidate_first : {true, false}) {
    const auto steps = PlanRound(candidate_first, /*tweak=*/true, /*spare_set=*/true, /*evict_between_sides=*/true);
    for (const RoundStep& step : steps) {
      EXPECT_FALSE(step.spare);
      EXPECT_NE(step.kind, RoundStep::kMoveInputs);
      EXPECT_NE(step.kind, RoundStep::kBaselineUntimed);
    }
    EXPECT_EQ(steps.front().kind, RoundStep::kCandidate);
    const Walk walk = WalkRound(steps);
    EXPECT_FALSE(walk.candidate_saw_answered_inputs);
    EXPECT_TRUE(walk.checked_the_timed_candidate_output);
    EXPECT_TRUE(walk.caches_dropped_between_sides);
  }
}

// Each side is called as often in either order (with a spare set), and the secret order decides
// which side ends a round, so the side that opens the next round follows either side as often.
TEST(PlanRound, EachSideRunsAsOftenInEitherOrder) {
  const Walk candidate_first = WalkRound(PlanRound(true, false, true, true));
  const Walk baseline_first = WalkRound(PlanRound(false, false, true, true));
  EXPECT_EQ(candidate_first.candidate_untimed, baseline_first.candidate_untimed);
  EXPECT_EQ(candidate_first.baseline_untimed, baseline_first.baseline_untimed);
}

// The secret order decides which side ends a round, so the side that opens the next round
// follows either side as often.
TEST(PlanRound, EitherSideEndsARoundAsOften) {
  for (const bool spare : {true, false}) {
    for (const bool tweak : {false, true}) {
      EXPECT_NE(WalkRound(PlanRound(true, tweak, spare, true)).ends_with_candidate,
                WalkRound(PlanRound(false, tweak, spare, true)).ends_with_candidate)
          << "spare " << spare << ", tweak " << tweak;
    }
  }
}

// Samples of `rounds` calls each side: the evaluator's request (whole, and less its cost: the
// sample) around the worker's in-process time.
TimingOutcome Clocks(double candidate_inner_us, double candidate_outer_us, double baseline_inner_us,
                     double baseline_outer_us, double overhead_us = 20, int rounds = 9) {
  TimingOutcome outcome;
  outcome.overhead_us = overhead_us;
  for (int i = 0; i < rounds; ++i) {
    outcome.candidate_inner_us.push_back(candidate_inner_us);
    outcome.candidate_outer_us.push_back(candidate_outer_us);
    outcome.candidate_us.push_back(std::max(candidate_outer_us - overhead_us, candidate_inner_us));
    outcome.baseline_inner_us.push_back(baseline_inner_us);
    outcome.baseline_outer_us.push_back(baseline_outer_us);
    outcome.baseline_us.push_back(std::max(baseline_outer_us - overhead_us, baseline_inner_us));
  }
  return outcome;
}

TEST(CrossCheckClocks, HonestClocksAgreeWithinTheRequestsCost) {
  TimingOutcome honest = Clocks(1000, 1025, 2000, 2024);
  CrossCheckClocks(honest);
  EXPECT_FALSE(honest.tampering.has_value()) << *honest.tampering;
  EXPECT_FALSE(honest.clock_ran_long);
  EXPECT_NEAR(honest.clock_gap_excess_us, 1.0, 1e-9);
}

TEST(CrossCheckClocks, ACandidateWhoseClockReadsShortIsCaughtAsAGapLoadMayForgive) {
  TimingOutcome short_clock = Clocks(1000, 6025, 2000, 2024);  // 5 ms the worker's clock did not see
  CrossCheckClocks(short_clock);
  ASSERT_TRUE(short_clock.tampering.has_value());
  EXPECT_NE(short_clock.tampering->find("the candidate changed the in-process timer"), std::string::npos);
  EXPECT_FALSE(short_clock.clock_ran_long) << "a gap load can open: timing_stage may forgive it under load";
  EXPECT_NEAR(short_clock.clock_gap_excess_us, 5001.0, 1e-9);
}

TEST(CrossCheckClocks, ACandidateClockAFewTensOfMicrosecondsShortIsNotTampering) {
  // About 100 us shorter than the baseline's gap: an honest KernelBench extension's call through the
  // Python runner read 50-64 us short.
  TimingOutcome honest = Clocks(40, 164, 140, 168);
  CrossCheckClocks(honest);
  EXPECT_FALSE(honest.tampering.has_value()) << *honest.tampering;
  EXPECT_NEAR(honest.clock_gap_excess_us, 96.0, 1e-9);
  TimingOutcome tampered = Clocks(40, 264, 140, 168);  // 200 us short: past any honest call's
  CrossCheckClocks(tampered);
  EXPECT_TRUE(tampered.tampering.has_value());
}

TEST(CrossCheckClocks, ADevicesOwnClockReadingShortIsTheHostsCostNotTampering) {
  // A GPU's events as the samples: the candidate runs on the device and cannot reach them, so a
  // gap larger than the baseline's is what its launches cost the host.
  TimingOutcome device = Clocks(1000, 6025, 2000, 2024);
  device.worker_clock = true;
  CrossCheckClocks(device);
  EXPECT_FALSE(device.tampering.has_value()) << *device.tampering;
  EXPECT_NEAR(device.clock_gap_excess_us, 5001.0, 1e-9);
  // A device clock longer than the request around it is still impossible.
  TimingOutcome long_device = Clocks(1000, 1025, 5000, 2024);
  long_device.worker_clock = true;
  CrossCheckClocks(long_device);
  EXPECT_TRUE(long_device.clock_ran_long);
}

TEST(CrossCheckClocks, AClockThatReadsLongerThanTheRequestAroundItIsNeverLoads) {
  // The baseline's in-process time 3 ms longer than the whole request: its sample, the larger of
  // the two clocks, would read 3 ms long and inflate the candidate's speedup. No load does that.
  TimingOutcome long_baseline = Clocks(1000, 1025, 5000, 2024);
  CrossCheckClocks(long_baseline);
  ASSERT_TRUE(long_baseline.tampering.has_value());
  EXPECT_TRUE(long_baseline.clock_ran_long);
  EXPECT_NE(long_baseline.tampering->find("saw the baseline take 2976.0 us more"), std::string::npos)
      << *long_baseline.tampering;
  // Within the noise of a clock read (under 50 us) it is not.
  TimingOutcome noise = Clocks(1000, 1025, 2030, 2024);
  CrossCheckClocks(noise);
  EXPECT_FALSE(noise.clock_ran_long);
}

}  // namespace
}  // namespace ksmith
