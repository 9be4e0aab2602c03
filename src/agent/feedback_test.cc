// Feedback rendered from real verdicts: testdata/cpu_*.json are `ksmith eval --json` outputs for
// vector_add and softmax candidates written before schema version 3 (what failed is read from
// their words, eval/verdict_upgrade.cc); testdata/v3_*.json are version-3 outputs for red-team
// kernels in tests/kernels/redteam, whose failures are typed fields; testdata/cuda_*.json are
// hand-made from the CUDA stages' field names (build resources and SASS, cold and warm timing,
// ncu facts).
#include "agent/feedback.h"

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

fs::path TestData(const std::string& name) { return fs::path(KSMITH_SOURCE_DIR) / "src/agent/testdata" / name; }

std::string ReadTestFile(const std::string& name) {
  auto text = ReadFile(TestData(name));
  if (!text.ok()) throw std::runtime_error(text.error().message);
  return *text;
}

nlohmann::json Verdict(const std::string& name) { return nlohmann::json::parse(ReadTestFile(name)); }

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

TEST(Feedback, CompileErrorQuotesTheFirstErrorsWithTheLinesTheyPointAt) {
  const std::string feedback = RenderFeedback(Verdict("cpu_compile_error.json"), ReadTestFile("cpu_compile_error.cpp"));
  EXPECT_TRUE(Contains(feedback, "Verdict: compile_error"));
  EXPECT_TRUE(Contains(feedback, "1. line 6: 'bb' was not declared in this scope; did you mean 'b'?\n"));
  EXPECT_TRUE(Contains(feedback, "       6 |     c[i] = a[i] + bb[i];\n"));
  EXPECT_TRUE(Contains(feedback, "2. line 9: expected ',' or ';' before '}' token\n"));
  // Not a signature problem: the required declaration is not repeated.
  EXPECT_EQ(feedback.find("must define"), std::string::npos) << feedback;
}

TEST(Feedback, NvccErrorsAreQuotedTheSameWay) {
  const std::string feedback =
      RenderFeedback(Verdict("cuda_compile_error.json"), ReadTestFile("cuda_compile_error.cu"));
  EXPECT_TRUE(Contains(feedback, "1. line 6: identifier \"bb\" is undefined\n"));
  EXPECT_TRUE(Contains(feedback, "       6 |   if (i < n) c[i] = a[i] + bb[i];\n"));
  EXPECT_TRUE(Contains(feedback, "2. line 10: expected a \";\"\n"));
  EXPECT_TRUE(Contains(feedback, "add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n)"));
}

TEST(Feedback, WrongSignatureShowsTheCandidatesDeclarationAndTheRequiredOne) {
  const std::string source =
      "// expect: compile_error\n// tries: int n\n// cause: int64_t n\n#include <cstdint>\n\n"
      "extern \"C\" void vector_add(const float* a, const float* b, float* c, int n) {\n"
      "  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];\n}\n";
  const std::string feedback = RenderFeedback(Verdict("cpu_wrongsig.json"), source);
  EXPECT_TRUE(Contains(feedback, "against the declaration ksmith requires: conflicting declaration of C function"));
  EXPECT_TRUE(Contains(feedback, "note, line 6: previous declaration"));
  EXPECT_TRUE(
      Contains(feedback, "       6 | extern \"C\" void vector_add(const float* a, const float* b, float* c, int n) {"));
  EXPECT_TRUE(Contains(feedback,
                       "exactly these parameter types:\n  extern \"C\" void vector_add(const float* a, const "
                       "float* b, float* c, int64_t n)\n"));
}

TEST(Feedback, MissingFunctionNamesTheUndefinedSymbolAndTheDeclaration) {
  const std::string feedback = RenderFeedback(Verdict("cpu_nodef.json"), "");
  EXPECT_TRUE(Contains(feedback, "undefined reference to `vector_add`"));
  EXPECT_TRUE(Contains(feedback, "extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n)"));
  EXPECT_EQ(feedback.find("collect2"), std::string::npos) << "the linker's own noise is left out";
}

TEST(Feedback, OnlyTheFirstThreeCompilerErrorsAreShown) {
  nlohmann::json verdict = Verdict("cpu_compile_error.json");
  std::string log;
  for (int line = 1; line <= 7; ++line)
    log += "src/k.cpp:" + std::to_string(line) + ":1: error: problem " + std::to_string(line) + "\n";
  verdict["stages"][1]["details"]["log"] = log;
  const std::string feedback = RenderFeedback(verdict, "l1\nl2\nl3\nl4\nl5\nl6\nl7\n");
  EXPECT_TRUE(Contains(feedback, "3. line 3: problem 3\n"));
  EXPECT_EQ(feedback.find("problem 4"), std::string::npos);
  EXPECT_TRUE(Contains(feedback, "(4 more errors not shown"));
}

TEST(Feedback, UnparsableCompilerOutputIsShownTrimmed) {
  nlohmann::json verdict = Verdict("cpu_compile_error.json");
  verdict["stages"][1]["details"]["log"] = "something odd happened\n" + std::string(10000, 'x') + "\n";
  const std::string feedback = RenderFeedback(verdict, "");
  EXPECT_TRUE(Contains(feedback, "Compiler output:\n```\nsomething odd happened\n"));
  EXPECT_LT(feedback.size(), 2000u);
}

TEST(Feedback, WrongOutputSaysWhichCaseFailedByHowMuchAndWhere) {
  const std::string feedback = RenderFeedback(Verdict("cpu_wrong.json"), "");
  EXPECT_TRUE(Contains(feedback, "Verdict: wrong_output"));
  EXPECT_TRUE(Contains(feedback, "Failing case: shape n=1, inputs normal: standard normal values, seed #1.\n"));
  EXPECT_TRUE(Contains(feedback, "- output 'c': 1 of 1 elements exceed the elementwise bound\n"));
  EXPECT_TRUE(Contains(feedback, "- worst element [0]: got -1.18892324, expected -0.846458077 (|error| 0.342)\n"));
  EXPECT_TRUE(Contains(feedback, "a logic error"));
  // Written before the cases were counted: one case singles out neither its shape nor its inputs.
  EXPECT_EQ(feedback.find("tiny shape"), std::string::npos) << feedback;
}

TEST(Feedback, UnwrittenOutputsAreCalledSo) {
  const std::string feedback = RenderFeedback(Verdict("cpu_half.json"), "");
  EXPECT_TRUE(Contains(feedback, "1 of 1 output elements were never written"));
  EXPECT_TRUE(Contains(feedback, "Nothing was written"));
  EXPECT_EQ(feedback.find("logic error"), std::string::npos) << "a norm error of 0 over poison is not a logic hint";
}

TEST(Feedback, NanOnLargeInputsPointsAtOverflow) {
  const std::string feedback = RenderFeedback(Verdict("cpu_softmax_unstable.json"), "");
  EXPECT_TRUE(Contains(feedback, "shape rows=1, cols=1, inputs large: normal values scaled by 1000"));
  EXPECT_TRUE(Contains(feedback, "1 elements are NaN or Inf"));
  EXPECT_EQ(feedback.find("norm-wise relative error 0 "), std::string::npos) << "a norm that skips NaN says nothing";
  EXPECT_TRUE(Contains(feedback, "subtracting the maximum")) << "from the NaN it returned";
  EXPECT_EQ(feedback.find("fails only under inputs large"), std::string::npos) << "one case singles nothing out";
}

// cpu_wrong.json (wrong at n=1, normal) with the correctness stage's count of its cases: groups of
// {shape, distribution, smallest dim, cases, failed}.
nlohmann::json WithTally(const std::vector<std::tuple<std::string, std::string, int, int, int>>& groups,
                         const std::string& stopped = "") {
  nlohmann::json verdict = Verdict("cpu_wrong.json");
  CaseTally tally;
  tally.stopped = stopped;
  for (const auto& [shape, distribution, smallest_dim, cases, failed] : groups) {
    tally.groups.push_back({shape, distribution, smallest_dim, cases, failed});
    tally.judged += cases;
    tally.failed += failed;
  }
  tally.planned = tally.judged + (stopped.empty() ? 0 : 5);
  for (auto& stage : verdict["stages"]) {
    if (stage["name"] == "correctness") stage["details"]["case_tally"] = tally.ToJson();
  }
  return verdict;
}

// The kernel: wrong on every case. The first case is tiny and a later one large, which
// used to give "it fails on a tiny shape" and "check for overflow".
TEST(Feedback, AKernelWrongEverywhereIsToldSoWithoutHintsAboutOneCase) {
  const nlohmann::json verdict = WithTally({{"n=1", "normal", 1, 2, 2},
                                            {"n=1", "large", 1, 2, 2},
                                            {"n=1000", "normal", 1000, 2, 2},
                                            {"n=1000", "large", 1000, 2, 2},
                                            {"n=77", "ties", 77, 1, 1}});
  const std::string feedback = RenderFeedback(verdict, "");
  EXPECT_TRUE(Contains(feedback, "Wrong on 9 of 9 cases: every one of the 3 shapes, under all 3 input distributions.\n"));
  EXPECT_TRUE(Contains(feedback, "First failing case: shape n=1, inputs normal"));
  EXPECT_TRUE(Contains(feedback, "It fails on every case judged"));
  EXPECT_EQ(feedback.find("tiny"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("overflow"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("ties are handled"), std::string::npos) << feedback;
  EXPECT_EQ(SummarizeVerdict(verdict), "wrong_output on 9 of 9 cases: n=1 normal, 1 of 1 elements off, max error 0.342 at [0]");
}

TEST(Feedback, OnlyTinyShapesFailingGivesTheTinyShapeHint) {
  const std::string feedback = RenderFeedback(WithTally({{"n=1", "normal", 1, 2, 2},
                                                         {"n=1", "large", 1, 2, 2},
                                                         {"n=5", "normal", 5, 2, 1},
                                                         {"n=1000", "normal", 1000, 2, 0},
                                                         {"n=1000", "large", 1000, 2, 0}}),
                                              "");
  EXPECT_TRUE(Contains(feedback, "Wrong on 5 of 10 cases: 2 of 3 shapes, under both input distributions.\n"));
  EXPECT_TRUE(Contains(feedback, "It fails only on tiny shapes (a dimension below 8), whatever the inputs"));
  EXPECT_EQ(feedback.find("Some draws"), std::string::npos) << "n=5 failing once of twice is its shape's doing";
  EXPECT_EQ(feedback.find("fails only under inputs"), std::string::npos) << feedback;
}

TEST(Feedback, DrawsFailingAloneWhereShapesAndInputsDoNotExplainItSaySo) {
  const std::string feedback = RenderFeedback(WithTally({{"n=1", "normal", 1, 2, 1},
                                                         {"n=1", "large", 1, 2, 1},
                                                         {"n=1000", "normal", 1000, 2, 1},
                                                         {"n=1000", "large", 1000, 2, 1}}),
                                              "");
  EXPECT_TRUE(Contains(feedback, "Wrong on 4 of 8 cases: every one of the 2 shapes, under both input distributions."));
  EXPECT_TRUE(Contains(feedback, "Some draws of one shape and distribution fail and others pass"));
  EXPECT_EQ(feedback.find("tiny"), std::string::npos) << feedback;
}

// Softmax without subtracting the maximum: large inputs overflow on most shapes, and a shape
// whose draw happened not to overflow passes. The shapes single nothing out.
TEST(Feedback, OnlyOneDistributionFailingNamesItWithItsAdvice) {
  const std::string feedback = RenderFeedback(WithTally({{"n=1", "normal", 1, 2, 0},
                                                         {"n=1", "large", 1, 2, 2},
                                                         {"n=50", "normal", 50, 1, 0},
                                                         {"n=50", "large", 50, 1, 0},
                                                         {"n=1000", "normal", 1000, 2, 0},
                                                         {"n=1000", "large", 1000, 2, 2}}),
                                              "");
  EXPECT_TRUE(Contains(feedback, "Wrong on 4 of 10 cases: 2 of 3 shapes, under large inputs only (1 of 2 "
                                 "distributions).\n"));
  EXPECT_EQ(feedback.find("it depends on the sizes"), std::string::npos) << feedback;
  EXPECT_TRUE(Contains(feedback, "It fails only under inputs large: normal values scaled by 1000"));
  EXPECT_TRUE(Contains(feedback, "check for overflow and cancellation"));
  EXPECT_EQ(feedback.find("tiny"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("fails on every case"), std::string::npos) << feedback;
}

TEST(Feedback, LargerShapesFailingUnderEveryInputPointAtSizes) {
  const std::string feedback = RenderFeedback(WithTally({{"n=1", "normal", 1, 1, 0},
                                                         {"n=1", "large", 1, 1, 0},
                                                         {"n=1000", "normal", 1000, 1, 1},
                                                         {"n=1000", "large", 1000, 1, 1}}),
                                              "");
  EXPECT_TRUE(Contains(feedback, "It fails on 1 of 2 shapes, whatever the inputs, and passes on the others: it "
                                 "depends on the sizes"));
  EXPECT_EQ(feedback.find("tiny"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("fails only under inputs"), std::string::npos) << feedback;
}

TEST(Feedback, ACountThatStoppedEarlySaysWhy) {
  const nlohmann::json verdict =
      WithTally({{"n=1", "normal", 1, 1, 1}, {"n=7", "normal", 7, 1, 1}}, "runtime_error: the worker was killed");
  const std::string feedback = RenderFeedback(verdict, "");
  EXPECT_TRUE(Contains(feedback, "Wrong on 2 of 2 cases judged: every one of the 2 shapes, under its one input "
                                 "distribution (normal).\n"));
  EXPECT_TRUE(Contains(feedback, "Judging stopped there, 5 cases short, when a later case failed otherwise: "
                                 "runtime_error: the worker was killed\n"));
  EXPECT_EQ(SummarizeVerdict(verdict).rfind("wrong_output on 2 of 2 cases judged: n=1 normal", 0), 0u)
      << SummarizeVerdict(verdict);
}

TEST(Feedback, VersionThreeVerdictsAreReadFromTheirFieldsAlone) {
  // The typed failure is what counts: a reason rewritten to say nothing changes none of it.
  nlohmann::json partial = Verdict("v3_partial_relu.json");
  ASSERT_EQ(partial.at("schema_version"), 3);
  partial["reason"] = "(reworded)";
  const std::string unwritten = RenderFeedback(partial, "");
  EXPECT_TRUE(Contains(unwritten, "Failing case: shape n=7, inputs normal: standard normal values, seed #1.\n"));
  EXPECT_TRUE(Contains(unwritten, "- output 'y': 3 of 7 output elements were never written\n"));
  EXPECT_TRUE(Contains(unwritten, "Some elements were never written"));
  EXPECT_EQ(unwritten.find("tiny shape"), std::string::npos) << "no count of the cases, no hint from one case";
  EXPECT_EQ(unwritten.find("norm-wise relative error 0 "), std::string::npos);
  EXPECT_EQ(SummarizeVerdict(partial), "wrong_output: n=7 normal, 3 of 7 elements never written, max error nan at [4]");

  nlohmann::json crash = Verdict("v3_crash_transpose.json");
  crash["reason"] = "(reworded)";
  const std::string crashed = RenderFeedback(crash, "");
  EXPECT_TRUE(Contains(crashed, "Failing case: shape rows=33, cols=129, inputs normal"));
  EXPECT_TRUE(Contains(crashed, "invalid memory access")) << "from the signal, not the words";

  nlohmann::json mutate = Verdict("v3_input_mutation_softmax.json");
  mutate["reason"] = "(reworded)";
  EXPECT_TRUE(Contains(RenderFeedback(mutate, ""), "Instead: Inputs are read-only"));
}

TEST(Feedback, ModifiedInputIsExplainedWithWhatToDoInstead) {
  const std::string feedback = RenderFeedback(Verdict("cpu_mutate.json"), "");
  EXPECT_TRUE(Contains(feedback, "Verdict: integrity_violation"));
  EXPECT_TRUE(Contains(feedback, "modified its input 'a'"));
  EXPECT_TRUE(Contains(feedback, "Instead: Inputs are read-only"));
}

TEST(Feedback, AuditFindingsAreListedWithTheirRuleAndAdvice) {
  const std::string feedback = RenderFeedback(Verdict("cpu_fopen.json"), "");
  EXPECT_TRUE(
      Contains(feedback, "- imports 'fopen': candidates may not touch files or file descriptors [file_access]\n"));
  EXPECT_TRUE(Contains(feedback, "Instead: remove it"));
}

TEST(Feedback, CrashNamesTheSignalTheCaseAndTheLikelyCause) {
  const std::string feedback = RenderFeedback(Verdict("cpu_segv.json"), "");
  EXPECT_TRUE(Contains(feedback, "Verdict: runtime_error"));
  EXPECT_TRUE(Contains(feedback, "killed by SIGSEGV"));
  EXPECT_TRUE(Contains(feedback, "invalid memory access"));
  EXPECT_TRUE(Contains(feedback, "Failing case: shape n=1, inputs normal: standard normal values, seed #1."));
}

// A kernel that crashes on every case crashes on the first, a tiny one: that singles out nothing.
// Only larger cases passing before it do.
TEST(Feedback, ACrashOnATinyShapeBlamesTheShapeOnlyWhereLargerOnesPassedBeforeIt) {
  nlohmann::json verdict = Verdict("cpu_segv.json");
  EXPECT_EQ(RenderFeedback(verdict, "").find("tiny shape"), std::string::npos) << "no record of what passed before";
  auto with_before = [&verdict](const std::vector<CaseGroup>& passed) {
    CaseTally tally{.planned = 30, .stopped = "runtime_error: killed"};
    for (const CaseGroup& group : passed) {
      tally.groups.push_back(group);
      tally.judged += group.cases;
    }
    nlohmann::json copy = verdict;
    for (auto& stage : copy["stages"]) {
      if (stage["name"] == "correctness") stage["details"]["case_tally"] = tally.ToJson();
    }
    return RenderFeedback(copy, "");
  };
  const std::string first = with_before({});
  EXPECT_TRUE(Contains(first, "It failed on the first case.\n"));
  EXPECT_EQ(first.find("tiny shape"), std::string::npos) << first;
  const std::string after_larger = with_before({{"n=1000", "normal", 1000, 2, 0}, {"n=33", "normal", 33, 1, 0}});
  EXPECT_TRUE(Contains(after_larger, "The 3 cases before it passed.\n"));
  EXPECT_TRUE(Contains(after_larger, "It happened on a tiny shape (a dimension below 8) after larger shapes passed"));
}

TEST(Feedback, TimeoutSuggestsWhatHangs) {
  const std::string feedback = RenderFeedback(Verdict("cpu_hang.json"), "");
  EXPECT_TRUE(Contains(feedback, "Verdict: timeout"));
  EXPECT_TRUE(Contains(feedback, "no answer within 2.5 s"));
  EXPECT_TRUE(Contains(feedback, "longer than the limit"));
}

TEST(Feedback, PassedCpuShowsTimesTheSpeedupIntervalTieAndRoofline) {
  const std::string feedback = RenderFeedback(Verdict("cpu_passed.json"), "");
  EXPECT_TRUE(Contains(feedback, "Correct on all 53 verification cases"));
  EXPECT_TRUE(Contains(feedback, "1170 us [1134, 1191] vs the baseline's 1259 us [1158, 1292], medians of 78 rounds"));
  EXPECT_TRUE(Contains(feedback, "Speedup: 0.995x [0.967, 1.17]: a tie"));
  EXPECT_TRUE(Contains(feedback, "Roofline: 56% of the memory limit"));
  EXPECT_TRUE(Contains(feedback, "some headroom"));
  EXPECT_EQ(feedback.find("4194304"), std::string::npos);
}

TEST(Feedback, PassedCudaShowsResourcesSassAndProfilerFactsButNotTheTimedShape) {
  const std::string feedback = RenderFeedback(Verdict("cuda_passed.json"), "");
  EXPECT_TRUE(Contains(feedback, "Speedup: 1.84x [1.8, 1.88]: faster than the baseline."));
  EXPECT_TRUE(Contains(feedback, "warm L2 cache (back-to-back calls) it takes 150.2 us"));
  EXPECT_TRUE(Contains(feedback, "Roofline: 39% of the memory limit"));
  EXPECT_TRUE(Contains(feedback, "far from the memory roofline"));
  EXPECT_TRUE(Contains(feedback, "use all SMs"));
  EXPECT_TRUE(Contains(feedback,
                       "- void softmax_rows<256>(float const*, float*, long, long) (sm_90a): 168 registers/thread, "
                       "2048 bytes static shared memory, spills 96 bytes stored / 112 loaded, 24-byte stack frame"));
  EXPECT_TRUE(Contains(feedback, "Register spills go to slow local memory"));
  EXPECT_TRUE(Contains(feedback, "At 168 registers per thread at most 384 threads fit on an SM"));
  EXPECT_TRUE(Contains(feedback, "SASS: 412 instructions, 36 FMA, 20 loads (0 of 64 bits or more"));
  EXPECT_TRUE(Contains(feedback, "No vectorized loads"));
  EXPECT_TRUE(Contains(feedback, "- memory-bound: DRAM at 41% of peak, SM at 22%"));
  EXPECT_EQ(feedback.find("rows=4096, cols=8192"), std::string::npos) << "the timed shape stays hidden";
}

TEST(Feedback, InfraErrorIsNotTheKernelsFault) {
  nlohmann::json verdict = {
      {"status", "infra_error"}, {"reason", "cannot create a scratch folder"}, {"stages", nlohmann::json::array()}};
  const std::string feedback = RenderFeedback(verdict, "");
  EXPECT_TRUE(Contains(feedback, "the evaluator failed, not your kernel"));
  EXPECT_TRUE(Contains(feedback, "cannot create a scratch folder"));
}

TEST(Feedback, ImpossibleTimeIsExplained) {
  nlohmann::json verdict = Verdict("cpu_passed.json");
  verdict["status"] = "integrity_violation";
  verdict["reason"] =
      "measured 1.0 us, but this machine needs at least 654.0 us to move 50331648 bytes and do "
      "4194304 flops: the time is not real";
  verdict["stages"][verdict["stages"].size() - 2]["outcome"] = "failed";  // physical_limit
  verdict["timing"]["candidate_us"]["median"] = 1.0;
  const std::string feedback = RenderFeedback(verdict, "");
  EXPECT_TRUE(Contains(feedback, "it measured 1 us, but this machine needs at least 653.8 us"));
  EXPECT_TRUE(Contains(feedback, "the time is not real"));
  EXPECT_EQ(feedback.find("50331648"), std::string::npos) << "the bytes would give the timed shape away";
  EXPECT_EQ(SummarizeVerdict(verdict), "integrity_violation: timed faster than this machine's physical limit allows");
  EXPECT_TRUE(Contains(feedback, "must do its whole work on every call"));
}

TEST(Feedback, StaysBoundedWhateverTheVerdictHolds) {
  nlohmann::json verdict = Verdict("cpu_fopen.json");
  verdict["reason"] = std::string(100000, 'r');
  auto& findings = verdict["stages"].back()["details"]["findings"];
  for (int i = 0; i < 1000; ++i)
    findings.push_back({{"rule", "network"}, {"message", std::string(5000, 'm')}, {"line", i}});
  EXPECT_LE(RenderFeedback(verdict, "").size(), 6100u);

  nlohmann::json crash = Verdict("cpu_segv.json");
  crash["reason"] = std::string(100000, 'r');
  crash["stages"].back()["details"]["candidate_output"] = std::string(100000, 'o');
  EXPECT_LE(RenderFeedback(crash, "").size(), 6100u);

  nlohmann::json wrong = Verdict("cpu_wrong.json");
  wrong["reason"] = std::string(100000, ';') + "; x";
  EXPECT_LE(RenderFeedback(wrong, "").size(), 6100u);
}

TEST(Feedback, MalformedVerdictsNeverThrow) {
  // Fields of other types than ksmith writes (a store edited by hand, another tool's JSON).
  nlohmann::json passed = Verdict("cuda_passed.json");
  passed["timing"]["speedup"] = 2.0;
  passed["timing"]["candidate_us"]["ci95"] = {nullptr, nullptr};
  passed["stages"][1]["details"]["resources"] = "none";
  passed["stages"][1]["details"]["sass"] = 7;
  EXPECT_TRUE(Contains(RenderFeedback(passed, ""), "Verdict: passed."));
  EXPECT_EQ(SummarizeVerdict(passed).rfind("passed, 0.00x (faster)", 0), 0u) << SummarizeVerdict(passed);
  const nlohmann::json odd = {{"status", "wrong_output"}, {"reason", 12}, {"stages", "x"}};
  EXPECT_TRUE(Contains(RenderFeedback(odd, ""), "Verdict: wrong_output."));
  EXPECT_EQ(SummarizeVerdict(odd), "wrong_output");
  EXPECT_EQ(RenderFeedback(nlohmann::json::array(), ""), "Verdict: none (the evaluator returned nothing readable).\n");
  // A log line far longer than any compiler writes must not take std::regex down.
  nlohmann::json compile = Verdict("cpu_compile_error.json");
  compile["stages"][1]["details"]["log"] = "src/k.cpp:1:1: error: " + std::string(1 << 20, 'e') + "\n";
  EXPECT_LE(RenderFeedback(compile, "").size(), 6100u);
}

TEST(Feedback, ExtractionFailuresSayHowToAnswer) {
  EXPECT_TRUE(Contains(RenderExtractionFeedback("the answer holds no code block"), "exactly one fenced code block"));
  EXPECT_TRUE(Contains(RenderExtractionFeedback("the answer was cut off inside the code block that defines relu (the "
                                                "model ran out of output tokens?)"),
                       "ran out of output tokens inside the code"));
}

TEST(SummarizeVerdict, OneLinePerStatus) {
  EXPECT_EQ(SummarizeVerdict(Verdict("cuda_passed.json")),
            "passed, 1.84x [1.80, 1.88] (faster), 39% of the memory roofline");
  EXPECT_EQ(SummarizeVerdict(Verdict("cpu_passed.json")),
            "passed, 1.00x [0.97, 1.17] (tie), 56% of the memory roofline");
  EXPECT_EQ(SummarizeVerdict(Verdict("cpu_wrong.json")),
            "wrong_output: n=1 normal, 1 of 1 elements off, max error 0.342 at [0]");
  EXPECT_EQ(SummarizeVerdict(Verdict("cpu_half.json")),
            "wrong_output: n=1 normal, 1 of 1 elements never written, max error nan at [0]");
  EXPECT_EQ(SummarizeVerdict(Verdict("cpu_compile_error.json")),
            "compile_error: line 6: 'bb' was not declared in this scope; did you mean 'b'?");
  EXPECT_EQ(SummarizeVerdict(Verdict("cpu_segv.json")).rfind("runtime_error: the worker ended (killed by SIGSEGV", 0),
            0u);
  nlohmann::json long_reason = Verdict("cpu_mutate.json");
  long_reason["reason"] = std::string(5000, 'x');
  EXPECT_LE(SummarizeVerdict(long_reason).size(), 220u);
  EXPECT_EQ(SummarizeVerdict(long_reason).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace ksmith
