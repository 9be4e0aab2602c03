#include "agent/run_report.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

RunRecord SampleRun() {
  RunRecord run;
  run.id = "20261121-120000-abcdef";
  run.task = "softmax";
  run.backend = "cpu";
  run.strategy = "refine";
  run.provider = "openai";
  run.model = "m";
  run.status = "finished";
  run.stop_reason = "3 candidates were made, the most --max-candidates allows";
  run.candidates = 2;
  run.passed = 1;
  return run;
}

TEST(RunReport, ShowsTheBestKernelTheModelsWordsAndEveryAttempt) {
  RunState state;
  // The store's ids run across runs (41, 42); the run numbers its candidates 1, 2.
  Attempt failed;
  failed.candidate_id = 41;
  failed.number = 1;
  failed.origin = "llm";
  failed.status = "extraction_failed";
  failed.extraction_error = "the answer has no code | block";
  Attempt best;
  best.candidate_id = 42;
  best.number = 2;
  best.parent_id = 41;
  best.origin = "llm";
  best.status = "passed";
  best.speedup = 2.5;
  best.answer = "Vectorized the exp.\n```cpp\nextern \"C\" void softmax() {}\n```";
  best.explanation = "Vectorized the exp.";
  best.source = "extern \"C\" void softmax() {}";
  best.verdict = *Verdict::FromJson({{"status", "passed"}, {"reason", "passed"}, {"speedup", 2.5}});
  state.attempts = {failed, best};
  const std::string report = RenderRunReport(SampleRun(), state, "out/best.cc");
  EXPECT_NE(report.find("# ksmith run 20261121-120000-abcdef"), std::string::npos);
  EXPECT_NE(report.find("3 candidates were made"), std::string::npos);
  EXPECT_NE(report.find("Written to `out/best.cc`"), std::string::npos);
  EXPECT_NE(report.find("> Vectorized the exp."), std::string::npos);
  EXPECT_NE(report.find("```cpp\nextern \"C\" void softmax() {}\n```"), std::string::npos);
  EXPECT_NE(report.find("Candidate 2 (llm): "), std::string::npos) << report;
  EXPECT_NE(report.find("| candidate | parent | origin |"), std::string::npos) << report;
  EXPECT_NE(report.find("| 1 | - | llm | extraction_failed |"), std::string::npos) << report;
  EXPECT_NE(report.find("| 2 | 1 | llm | passed | 2.50x |"), std::string::npos) << report;
  EXPECT_EQ(report.find("42"), std::string::npos) << "no store id: " << report;
  // A pipe inside a cell would break the table.
  EXPECT_NE(report.find("no code / block"), std::string::npos) << report;
}

TEST(RunReport, SaysSoWhenNothingPassed) {
  RunState state;
  Attempt failed;
  failed.candidate_id = 1;
  failed.origin = "tune";
  failed.status = "compile_error";
  failed.verdict = *Verdict::FromJson({{"status", "compile_error"}, {"reason", "compile error: x"}});
  state.attempts = {failed};
  const std::string report = RenderRunReport(SampleRun(), state, "");
  EXPECT_NE(report.find("No candidate passed."), std::string::npos);
  EXPECT_EQ(report.find("Written to"), std::string::npos);
}

TEST(RunReport, SaysPlainlyWhenNothingBeatTheBaseline) {
  auto attempt_with = [](const std::string& comparison, double median, double low, double high) {
    Attempt attempt;
    attempt.candidate_id = 7;
    attempt.number = 1;
    attempt.origin = "tune";
    attempt.status = "passed";
    attempt.speedup = median;
    Verdict verdict;
    verdict.status = VerdictStatus::kPassed;
    Timing timing;
    timing.speedup = {median, low, high};
    timing.comparison = comparison;
    verdict.timing = timing;
    attempt.verdict = verdict;
    return attempt;
  };
  const Attempt slower = attempt_with("slower", 0.69, 0.67, 0.71);
  EXPECT_EQ(ShortOfBaseline(slower), "slower than the baseline (0.69x)");
  RunState state;
  state.attempts = {slower};
  const std::string report = RenderRunReport(SampleRun(), state, "out/best.cc");
  EXPECT_NE(report.find("## Fastest correct kernel"), std::string::npos) << report;
  EXPECT_NE(report.find("**Nothing beat the baseline.** The fastest correct kernel is slower than the baseline (0.69x)."),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("## Best kernel"), std::string::npos) << report;

  EXPECT_EQ(ShortOfBaseline(attempt_with("tie", 1.01, 0.98, 1.04)),
            "not measurably faster than the baseline (1.01x, interval 0.98-1.04)");
  const Attempt faster = attempt_with("faster", 2.0, 1.9, 2.1);
  EXPECT_EQ(ShortOfBaseline(faster), "");
  state.attempts = {faster};
  EXPECT_NE(RenderRunReport(SampleRun(), state, "out/best.cc").find("## Best kernel"), std::string::npos);
}

TEST(RunReport, RetriedModelCallsAreCountedWithTheirReasons) {
  std::vector<LlmCallRecord> calls(3);
  calls[0].call.retry_reasons = {"HTTP 429", "HTTP 429"};
  calls[2].call.retry_reasons = {"timed out"};
  EXPECT_EQ(RetrySummary(calls), "2 of 3 model calls were retried: HTTP 429 (2 times), timed out (1 time)");
  EXPECT_EQ(RetrySummary({LlmCallRecord{}}), "");
}

}  // namespace
}  // namespace ksmith
