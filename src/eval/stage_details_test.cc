// The typed stage details: one JSON form that reads back as written, older key names and
// mistyped fields, and what verdicts before schema version 3 said only in words (the verdicts in
// src/agent/testdata are real `ksmith eval --json` outputs of that time).
#include "eval/stage_details.h"

#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "eval/verdict.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Verdict OldVerdict(const std::string& name) {
  auto text = ReadFile(fs::path(KSMITH_SOURCE_DIR) / "src/agent/testdata" / name);
  if (!text.ok()) throw std::runtime_error(text.error().message);
  auto verdict = Verdict::FromJson(nlohmann::json::parse(*text));
  if (!verdict.ok()) throw std::runtime_error(verdict.error().message);
  return *verdict;
}

// A copy: the verdicts here are often temporaries.
Failure FailureOf(const Verdict& verdict) {
  const StageRecord* stage = verdict.FailedStage();
  return stage != nullptr && stage->details.failure ? *stage->details.failure : Failure{};
}

TEST(StageDetails, EverySectionReadsBackAsWritten) {
  StageDetails details;
  details.summary = "1 case";
  details.note = "busy";
  Failure& failure = details.MutableFailure(FailureKind::kWrongOutput);
  failure.at = CaseRef{"rows=3, cols=5, large, seed #1", "rows=3, cols=5", "large", 3};
  failure.mismatch = OutputMismatch{.output = "y", .count = 15, .over_bound = 2, .norm_error = 0.5,
                                    .norm_bound = 1e-4, .worst_index = 7, .worst_got = 1, .worst_ref = 2,
                                    .worst_abs_error = 1};
  details.build = BuildFacts{.cache_hit = true, .compile_s = 1.5, .command = "nvcc", .resources =
                             std::vector<KernelResources>{KernelResources{.name = "k", .registers = 40}}};
  details.MutableCheck().worst_norm_error = 0.25;
  details.MutableCheck().cases = 12;
  details.MutableCounters().evaluator_ms["candidate_request"] = 3.5;
  TimingFacts& timing = details.MutableTiming();
  timing.rounds = 40;
  timing.shape = "rows=4096";
  timing.candidate = SideTiming{.cold_us = 10, .warm_us = 8, .samples = 40};
  timing.other_load_cores = std::vector<double>{0.1, 0.2};
  details.limit = PhysicalLimitFacts{5, "memory", 3000, 60000};
  details.profile = ProfileFacts{{"memory-bound"}, nlohmann::json::array({{{"kernel", "k"}}})};

  const nlohmann::json json = details.ToJson();
  EXPECT_EQ(json.at("failed_case"), "rows=3, cols=5, large, seed #1") << "the label, where version 1 had it";
  EXPECT_EQ(json.at("failure").at("kind"), "wrong_output");
  EXPECT_EQ(json.at("cases"), 12) << "sections are flat, as before the types";
  EXPECT_EQ(json.at("candidate").at("cold_us"), 10);
  const StageDetails read = StageDetails::FromJson(json);
  EXPECT_EQ(read.ToJson(), json);
  ASSERT_TRUE(read.failure && read.failure->mismatch);
  EXPECT_EQ(read.failure->mismatch->worst_index, 7);
  EXPECT_EQ(read.failure->at->smallest_dim, 3);
  ASSERT_TRUE(read.build && read.build->resources);
  EXPECT_EQ(read.build->resources->at(0).registers, 40);
  EXPECT_FALSE(read.build->sass.has_value()) << "written only once compiled";
}

TEST(StageDetails, AWrittenGuardZoneReadsBackWithItsTensorSideAndOffset) {
  StageDetails details;
  Failure& failure = details.MutableFailure(FailureKind::kOutOfBounds);
  failure.guard = GuardBreach{.tensor = "y", .side = "after", .offset = 4000, .element = 1000, .changed_bytes = 4};
  const nlohmann::json json = details.ToJson();
  EXPECT_EQ(json.at("failure").at("guard").at("side"), "after");
  const StageDetails read = StageDetails::FromJson(json);
  EXPECT_EQ(read.ToJson(), json);
  ASSERT_TRUE(read.failure && read.failure->guard);
  EXPECT_EQ(read.failure->guard->tensor, "y");
  EXPECT_EQ(read.failure->guard->offset, 4000);
  EXPECT_EQ(read.failure->guard->element, 1000);
  EXPECT_EQ(read.failure->guard->changed_bytes, 4);
  EXPECT_FALSE(StageDetails::FromJson(nlohmann::json::object()).failure.has_value());
}

TEST(StageDetails, KeysItDoesNotKnowAreKeptAndMistypedOnesIgnored) {
  const nlohmann::json json = {{"summary", 7}, {"cases", "many"}, {"from_the_future", {1, 2}}};
  const StageDetails read = StageDetails::FromJson(json);
  EXPECT_EQ(read.summary, "");
  EXPECT_FALSE(read.check.has_value());
  EXPECT_EQ(read.ToJson().at("from_the_future"), nlohmann::json({1, 2}));
  EXPECT_TRUE(StageDetails::FromJson(nlohmann::json::array()).ToJson().empty());
  EXPECT_FALSE(StageDetails::FromJson({{"protections", {{"seccomp", "yes"}}}}).protections.has_value() &&
               StageDetails::FromJson({{"protections", {{"seccomp", "yes"}}}}).protections->seccomp);
}

TEST(StageDetails, VersionOnePeakNamesReadAsTheSharedOnes) {
  const StageDetails cpu = StageDetails::FromJson({{"floor_us", 2.0}, {"memory_bandwidth_gbs", 40.0}, {"fp32_gflops", 900.0}});
  ASSERT_TRUE(cpu.limit.has_value());
  EXPECT_EQ(cpu.limit->bandwidth_gbps, 40.0);
  EXPECT_EQ(cpu.limit->fp32_gflops, 900.0);
  const StageDetails cuda = StageDetails::FromJson({{"copy_bandwidth_gbps", 3000.0}, {"fp32_tflops", 60.0}});
  ASSERT_TRUE(cuda.limit.has_value());
  EXPECT_EQ(cuda.limit->bandwidth_gbps, 3000.0);
  EXPECT_EQ(cuda.limit->fp32_gflops, 60000.0);
  EXPECT_FALSE(cuda.ToJson().contains("fp32_tflops")) << "written back under the version 2 names";
}

TEST(StageDetails, CaseLabelsSplitIntoShapeDistributionAndSmallestDim) {
  const CaseRef ref = CaseRef::FromLabel("rows=37, cols=5, large, seed #2 (random shape)");
  EXPECT_EQ(ref.shape, "rows=37, cols=5");
  EXPECT_EQ(ref.distribution, "large");
  EXPECT_EQ(ref.smallest_dim, 5);
  EXPECT_EQ(CaseRef::FromLabel("").smallest_dim, 0);
  EXPECT_EQ(ParseFailureKind(FailureKindName(FailureKind::kLateWrite)), FailureKind::kLateWrite);
  EXPECT_EQ(ParseFailureKind("something new"), FailureKind::kUnspecified);
}

// --- What older verdicts said in words -----------------------------------------------------

TEST(VerdictUpgrade, AWrongOutputGetsItsCaseAndMismatchNumbers) {
  const Verdict wrong = OldVerdict("cpu_wrong.json");
  const Failure failure = FailureOf(wrong);
  EXPECT_EQ(failure.kind, FailureKind::kWrongOutput);
  ASSERT_TRUE(failure.at.has_value());
  EXPECT_EQ(failure.at->shape, "n=1");
  EXPECT_EQ(failure.at->distribution, "normal");
  ASSERT_TRUE(failure.mismatch.has_value());
  EXPECT_EQ(failure.mismatch->output, "c");
  EXPECT_EQ(failure.mismatch->over_bound, 1);
  EXPECT_EQ(failure.mismatch->count, 1);
  EXPECT_DOUBLE_EQ(failure.mismatch->norm_error, 0.405);
  EXPECT_DOUBLE_EQ(failure.mismatch->norm_bound, 0.000111);
  EXPECT_EQ(failure.mismatch->worst_index, 0);
  EXPECT_DOUBLE_EQ(failure.mismatch->worst_abs_error, 0.342);

  const Verdict half = OldVerdict("cpu_half.json");
  ASSERT_TRUE(FailureOf(half).mismatch.has_value());
  EXPECT_EQ(FailureOf(half).mismatch->unwritten, 1);
  const Verdict unstable = OldVerdict("cpu_softmax_unstable.json");
  ASSERT_TRUE(FailureOf(unstable).mismatch.has_value());
  EXPECT_EQ(FailureOf(unstable).mismatch->nonfinite, 1);
}

TEST(VerdictUpgrade, ADeadWorkerGetsItsSignalAndTheCaseItRan) {
  const Verdict segv = OldVerdict("cpu_segv.json");
  const Failure crash = FailureOf(segv);
  EXPECT_EQ(crash.kind, FailureKind::kWorkerCrashed);
  EXPECT_EQ(crash.signal, SIGSEGV);
  ASSERT_TRUE(crash.at.has_value());
  EXPECT_EQ(crash.at->label, "n=1, normal, seed #1");
  const Verdict hung = OldVerdict("cpu_hang.json");
  const Failure hang = FailureOf(hung);
  EXPECT_EQ(hang.kind, FailureKind::kWorkerTimedOut);
  ASSERT_TRUE(hang.at.has_value());
  EXPECT_EQ(hang.at->shape, "n=1");
}

TEST(VerdictUpgrade, IntegrityViolationsAndBuildsGetTheirKinds) {
  EXPECT_EQ(FailureOf(OldVerdict("cpu_mutate.json")).kind, FailureKind::kInputModified);
  EXPECT_EQ(FailureOf(OldVerdict("cpu_fopen.json")).kind, FailureKind::kContractFinding);
  const Verdict compile = OldVerdict("cpu_compile_error.json");
  EXPECT_EQ(FailureOf(compile).kind, FailureKind::kCompilerRejected);
  const StageRecord* build = compile.FindStage(StageId::kBuild);
  ASSERT_NE(build, nullptr);
  ASSERT_EQ(build->details.diagnostics.size(), 2u);
  EXPECT_EQ(build->details.diagnostics[0].line, 6);
  EXPECT_EQ(build->details.log.find("The candidate must define"), std::string::npos)
      << "the declaration the JSON log ends with is not the compiler's";
  EXPECT_NE(compile.ToJson()["stages"][1]["details"]["log"].get<std::string>().find("The candidate must define"),
            std::string::npos)
      << "and it is written back";
  EXPECT_FALSE(OldVerdict("cpu_passed.json").FailedStage());
}

TEST(VerdictUpgrade, ACurrentVerdictIsNeverParsed) {
  Verdict verdict;
  verdict.status = VerdictStatus::kWrongOutput;
  verdict.reason = "wrong output at n=1, normal, seed #1: output 'c': 1 of 1 elements exceed the elementwise bound";
  verdict.stages.push_back({"correctness", "failed", 0, StageDetails{}, 0});
  const auto read = Verdict::FromJson(verdict.ToJson());
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->FailedStage()->details.failure.has_value()) << "version 3 records its failure, or has none";
}

}  // namespace
}  // namespace ksmith
