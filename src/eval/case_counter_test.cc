#include "eval/case_counter.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

CaseRef Case(const std::string& shape, const std::string& distribution, int64_t smallest_dim) {
  return CaseRef{shape + ", " + distribution + ", seed #1", shape, distribution, smallest_dim};
}

// What a session's check does for a wrong case: the failure in the stage, the status and reason.
bool FailWrong(VerdictRecorder& recorder, StageRecord& stage, const CaseRef& at) {
  Failure& failure = stage.details.MutableFailure(FailureKind::kUnspecified);
  failure.at = at;
  failure.mismatch = OutputMismatch{.output = "c", .count = 10, .over_bound = 10};
  return recorder.Finish(stage, VerdictStatus::kWrongOutput, "wrong output at " + at.label,
                         FailureKind::kWrongOutput);
}

class CaseCounterTest : public ::testing::Test {
 protected:
  Verdict verdict_;
  VerdictRecorder recorder_{verdict_};
  StageRecord& stage_ = recorder_.Stage(StageId::kCorrectness);
};

TEST_F(CaseCounterTest, EveryCasePassingLeavesNoTally) {
  CaseCounter counter(recorder_, stage_, 2);
  EXPECT_TRUE(counter.Record(Case("n=1", "normal", 1), true));
  EXPECT_TRUE(counter.Record(Case("n=1000", "large", 1000), true));
  EXPECT_TRUE(counter.Finish(true));
  EXPECT_EQ(stage_.outcome, "ok");
  EXPECT_FALSE(stage_.details.check && stage_.details.check->tally);
}

// Given a kernel wrong on every case, then every case is judged and counted, and the verdict is
// still the first wrong case's, its reason saying how many.
TEST_F(CaseCounterTest, AfterAWrongOutputTheRestIsCountedAndTheFirstFailureStays) {
  const std::vector<CaseRef> cases = {Case("n=1", "normal", 1), Case("n=1", "large", 1), Case("n=1000", "normal", 1000),
                                      Case("n=1000", "normal", 1000)};
  CaseCounter counter(recorder_, stage_, cases.size());
  for (const CaseRef& at : cases) EXPECT_TRUE(counter.Record(at, FailWrong(recorder_, stage_, at)));
  EXPECT_FALSE(counter.Finish(true));
  EXPECT_EQ(verdict_.status, VerdictStatus::kWrongOutput);
  EXPECT_EQ(verdict_.reason, "wrong output at n=1, normal, seed #1; wrong on 4 of 4 cases");
  EXPECT_EQ(stage_.outcome, "failed");
  ASSERT_TRUE(stage_.details.failure && stage_.details.failure->at);
  EXPECT_EQ(stage_.details.failure->at->label, cases[0].label);
  ASSERT_TRUE(stage_.details.check && stage_.details.check->tally);
  const CaseTally& tally = *stage_.details.check->tally;
  EXPECT_EQ(tally.planned, 4);
  EXPECT_EQ(tally.judged, 4);
  EXPECT_EQ(tally.failed, 4);
  EXPECT_EQ(tally.stopped, "");
  ASSERT_EQ(tally.groups.size(), 3u);
  EXPECT_EQ(tally.groups[2].shape, "n=1000");
  EXPECT_EQ(tally.groups[2].cases, 2);
  EXPECT_EQ(tally.groups[2].failed, 2);
  // And it reads back from the stage's JSON.
  const StageDetails read = StageDetails::FromJson(stage_.details.ToJson());
  ASSERT_TRUE(read.check && read.check->tally);
  EXPECT_EQ(read.check->tally->ToJson(), tally.ToJson());
  EXPECT_TRUE(read.unknown.empty()) << read.unknown.dump();
}

TEST_F(CaseCounterTest, PassingCasesAroundTheFailuresAreCountedToo) {
  CaseCounter counter(recorder_, stage_, 3);
  EXPECT_TRUE(counter.Record(Case("n=1000", "normal", 1000), true));
  const CaseRef tiny = Case("n=3", "normal", 3);
  EXPECT_TRUE(counter.Record(tiny, FailWrong(recorder_, stage_, tiny)));
  EXPECT_TRUE(counter.Record(Case("n=2000", "normal", 2000), true));
  EXPECT_FALSE(counter.Finish(true));
  const CaseTally& tally = *stage_.details.check->tally;
  EXPECT_EQ(tally.judged, 3);
  EXPECT_EQ(tally.failed, 1);
  EXPECT_EQ(verdict_.reason, "wrong output at n=3, normal, seed #1; wrong on 1 of 3 cases");
}

// Given a wrong case and then a crash, then the count stops there, says why, and the verdict is
// the wrong output's.
TEST_F(CaseCounterTest, ALaterCrashStopsTheCountAndIsNamed) {
  CaseCounter counter(recorder_, stage_, 5);
  const CaseRef first = Case("n=1", "normal", 1);
  EXPECT_TRUE(counter.Record(first, FailWrong(recorder_, stage_, first)));
  stage_.details.candidate_output = "the crash's output";
  const bool crashed = recorder_.Finish(stage_, VerdictStatus::kRuntimeError, "the worker was killed by SIGSEGV",
                                        FailureKind::kWorkerCrashed);
  EXPECT_FALSE(counter.Record(Case("n=7", "normal", 7), crashed));
  EXPECT_FALSE(counter.Record(Case("n=9", "normal", 9), true)) << "stopped for good";
  EXPECT_FALSE(counter.Finish(false));
  EXPECT_EQ(verdict_.status, VerdictStatus::kWrongOutput);
  EXPECT_EQ(stage_.details.failure->kind, FailureKind::kWrongOutput);
  EXPECT_EQ(stage_.details.candidate_output, "") << "the crash's, not the wrong case's";
  const CaseTally& tally = *stage_.details.check->tally;
  EXPECT_EQ(tally.judged, 1);
  EXPECT_EQ(tally.stopped, "runtime_error: the worker was killed by SIGSEGV");
  EXPECT_NE(verdict_.reason.find("wrong on 1 of the 1 cases judged (of 5) before a later case ended the count: "
                                 "runtime_error"),
            std::string::npos)
      << verdict_.reason;
}

// A breach of the contract after a wrong output is the verdict: a kernel that fails a case on
// purpose cannot probe the walls in the cases after it and be reported as merely wrong.
TEST_F(CaseCounterTest, ALaterIntegrityViolationIsTheVerdict) {
  CaseCounter counter(recorder_, stage_, 4);
  const CaseRef first = Case("n=1", "normal", 1);
  EXPECT_TRUE(counter.Record(first, FailWrong(recorder_, stage_, first)));
  const bool breached = recorder_.Finish(stage_, VerdictStatus::kIntegrityViolation,
                                         "forbidden call: fork() at n=7", FailureKind::kForbiddenCall);
  EXPECT_FALSE(counter.Record(Case("n=7", "normal", 7), breached));
  EXPECT_FALSE(counter.Finish(true));
  EXPECT_EQ(verdict_.status, VerdictStatus::kIntegrityViolation);
  EXPECT_EQ(stage_.details.failure->kind, FailureKind::kForbiddenCall);
  EXPECT_EQ(verdict_.reason, "forbidden call: fork() at n=7; before it, wrong on 1 of 1 cases");
  ASSERT_TRUE(stage_.details.check && stage_.details.check->tally);
  EXPECT_EQ(stage_.details.check->tally->failed, 1);
  EXPECT_EQ(stage_.details.check->tally->stopped, "integrity_violation: forbidden call: fork() at n=7");
}

// A failure that never reached Record (the worker died while a case ran) also ends the count.
TEST_F(CaseCounterTest, AFailureOutsideRecordStopsTheCountAtFinish) {
  CaseCounter counter(recorder_, stage_, 3);
  const CaseRef first = Case("n=1", "normal", 1);
  EXPECT_TRUE(counter.Record(first, FailWrong(recorder_, stage_, first)));
  recorder_.Finish(stage_, VerdictStatus::kTimeout, "a call did not finish", FailureKind::kWorkerTimedOut);
  EXPECT_FALSE(counter.Finish(false));
  EXPECT_EQ(verdict_.status, VerdictStatus::kWrongOutput);
  EXPECT_EQ(stage_.details.check->tally->stopped, "timeout: a call did not finish");
}

// Given a crash after two passing cases, then the verdict is the crash's as it was, and the tally
// holds the cases that passed before it.
TEST_F(CaseCounterTest, AFirstFailureThatIsNotAWrongOutputIsLeftAsItIs) {
  CaseCounter counter(recorder_, stage_, 5);
  EXPECT_TRUE(counter.Record(Case("n=1000", "normal", 1000), true));
  EXPECT_TRUE(counter.Record(Case("n=2000", "normal", 2000), true));
  const bool crashed = recorder_.Finish(stage_, VerdictStatus::kRuntimeError, "killed", FailureKind::kWorkerCrashed);
  EXPECT_FALSE(counter.Record(Case("n=1", "normal", 1), crashed));
  EXPECT_FALSE(counter.Finish(false));
  EXPECT_EQ(verdict_.status, VerdictStatus::kRuntimeError);
  EXPECT_EQ(verdict_.reason, "killed");
  ASSERT_TRUE(stage_.details.check && stage_.details.check->tally);
  const CaseTally& tally = *stage_.details.check->tally;
  EXPECT_EQ(tally.planned, 5);
  EXPECT_EQ(tally.judged, 2);
  EXPECT_EQ(tally.failed, 0);
  EXPECT_EQ(tally.groups.size(), 2u);
  EXPECT_EQ(tally.stopped, "runtime_error: killed");
}

}  // namespace
}  // namespace ksmith
