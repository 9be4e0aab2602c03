#include "eval/stage_driver.h"

#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// Records the stages it is asked to run; the ones in `failing` return false.
class RecordingRunner : public StageRunner {
 public:
  explicit RecordingRunner(std::set<StageId> failing = {}) : failing_(std::move(failing)) {}
  bool RunStage(StageId stage) override {
    ran.push_back(stage);
    return failing_.count(stage) == 0;
  }
  std::vector<StageId> ran;

 private:
  std::set<StageId> failing_;
};

const StagePlan kPlan = {StageId::kSandbox,       StageId::kCorrectness,  StageId::kIdleCheck,
                         StageId::kTiming,        StageId::kRecheck,      StageId::kPhysicalLimit,
                         StageId::kProcessState,  StageId::kHiddenShapes, StageId::kSecondTiming,
                         StageId::kClose};

TEST(StageDriver, RunsThePlanInOrderAndPasses) {
  RecordingRunner runner;
  EXPECT_TRUE(DriveStages(kPlan, runner, true));
  EXPECT_EQ(runner.ran, kPlan);
}

TEST(StageDriver, LeavesOutTheTimedStagesWithoutTiming) {
  RecordingRunner runner;
  EXPECT_TRUE(DriveStages(kPlan, runner, false));
  EXPECT_EQ(runner.ran, (std::vector<StageId>{StageId::kSandbox, StageId::kCorrectness, StageId::kIdleCheck,
                                              StageId::kProcessState, StageId::kHiddenShapes, StageId::kClose}));
}

TEST(StageDriver, ADecidingFailureEndsTheSessionAndFails) {
  RecordingRunner runner({StageId::kRecheck});
  EXPECT_FALSE(DriveStages(kPlan, runner, true));
  EXPECT_EQ(runner.ran.back(), StageId::kRecheck);
  EXPECT_EQ(runner.ran.size(), 5u);
}

TEST(StageDriver, APropertyThatCannotGoOnEndsTheSessionButPasses) {
  RecordingRunner hidden({StageId::kHiddenShapes});
  EXPECT_TRUE(DriveStages(kPlan, hidden, true));
  EXPECT_EQ(hidden.ran.back(), StageId::kHiddenShapes);  // neither the second timing nor the close

  RecordingRunner second({StageId::kSecondTiming});
  EXPECT_TRUE(DriveStages(kPlan, second, true));
  EXPECT_EQ(second.ran.back(), StageId::kSecondTiming);  // its worker is gone: no close
}

TEST(StageDriver, KindsBelongToTheStage) {
  EXPECT_EQ(KindOf(StageId::kCorrectness), StageKind::kDeciding);
  EXPECT_EQ(KindOf(StageId::kPhysicalLimit), StageKind::kTimed);
  EXPECT_EQ(KindOf(StageId::kHiddenShapes), StageKind::kProperty);
  EXPECT_EQ(KindOf(StageId::kSecondTiming), StageKind::kTimedProperty);
}

}  // namespace
}  // namespace ksmith
