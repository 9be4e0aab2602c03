// The evaluation pipeline with the cpu backend, end to end on a small vector_add task: real g++,
// the real sandboxed worker, and one verdict status per kind of candidate.
#include "eval/pipeline.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <csignal>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "testing/child_processes.h"
#include "testing/scoped_env.h"
#include "testing/small_task.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

std::string Kernel(const std::string& body, const std::string& includes = "") {
  return "#include <cstdint>\n" + includes +
         "extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n" + body +
         "\n}\n";
}

const std::string kHonest = Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];");

class CpuPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    cache_env_.emplace("KSMITH_CACHE_DIR", (temp_.path() / "cache").string());
    auto cache = CacheDirectory();
    ASSERT_TRUE(cache.ok());
    BackendConfig config;
    config.cache_directory = *cache;
    config.measure_facts = false;
    config.worker_executable = KSMITH_WORKER_PATH;
    auto backend = MakeCpuBackend(config);
    ASSERT_TRUE(backend.ok()) << backend.error().message;
    backend_ = std::move(backend.value());

    auto task = testing::WriteSmallVectorAdd(temp_.path() / "tasks");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::move(task.value());

    options_.seeds = 1;
    options_.time = false;
    options_.threads = 1;
    options_.call_timeout = std::chrono::milliseconds(3000);
    options_.timing_budget_s = 0.1;
    options_.fixed_seed = 12345;
  }

  void TearDown() override { cache_env_.reset(); }

  Verdict Evaluate(const std::string& source) {
    return Pipeline(*backend_, pool_).Evaluate(task_, {"candidate.cpp", source}, options_);
  }

  static const StageRecord* FindStage(const Verdict& verdict, const std::string& name) {
    for (const auto& stage : verdict.stages) {
      if (stage.name == name) return &stage;
    }
    return nullptr;
  }

  static std::string Describe(const Verdict& verdict) { return verdict.ToJson().dump(2); }

  ScopedTempDir temp_{"ksmith-evaluator"};
  std::optional<testing::ScopedEnv> cache_env_;
  std::unique_ptr<EvalBackend> backend_;
  CompilePool pool_{2};
  Task task_;
  EvalOptions options_;
};

TEST_F(CpuPipelineTest, HonestKernelPassesEveryStage) {
  const Verdict verdict = Evaluate(kHonest);
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("correct on all"), std::string::npos) << verdict.reason;
  for (const char* name : {"audit", "build", "trusted_build", "sandbox", "correctness", "determinism"}) {
    const StageRecord* stage = FindStage(verdict, name);
    ASSERT_NE(stage, nullptr) << name << " missing:\n" << Describe(verdict);
    EXPECT_EQ(stage->outcome, "ok") << name;
  }
  EXPECT_FALSE(verdict.timing.has_value());
  EXPECT_EQ(verdict.task, "vector_add");
  EXPECT_EQ(verdict.backend, "cpu");
  EXPECT_TRUE(verdict.provenance.value("seed_fixed_by_user", false));
  EXPECT_TRUE(verdict.provenance.contains("protections"));
  EXPECT_TRUE(verdict.provenance.at("protections").value("seccomp", false));
  EXPECT_EQ(verdict.provenance.value("candidate_sha256", std::string()).size(), 64u);
}

// A reference that changes its inputs once it has answered (as an imported model's in-place
// operation can): the reference reads each case in place until that shows, then the case is drawn
// again and the reference runs on copies, so the candidate is still given the case's own inputs.
TEST_F(CpuPipelineTest, AReferenceThatWritesToItsInputsStillJudgesAnHonestKernelOnTheCasesOwnInputs) {
  const fs::path reference = task_.directory / "reference.cc";
  std::ofstream(reference) << "#include <cstdint>\n"
                              "extern \"C\" void vector_add_reference(const float* a, const float* b, double* c, "
                              "int64_t n) {\n"
                              "  for (int64_t i = 0; i < n; ++i) c[i] = static_cast<double>(a[i]) + b[i];\n"
                              "  if (n > 0) const_cast<float*>(a)[n - 1] += 1.0f;\n"
                              "}\n";
  const Verdict honest = Evaluate(kHonest);
  EXPECT_EQ(honest.status, VerdictStatus::kPassed) << Describe(honest);
  const Verdict wrong = Evaluate(Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];"));
  EXPECT_EQ(wrong.status, VerdictStatus::kWrongOutput) << Describe(wrong);
}

TEST_F(CpuPipelineTest, TimedHonestKernelGetsASpeedupWithAnInterval) {
  options_.time = true;
  const Verdict verdict = Evaluate(kHonest);
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << Describe(verdict);
  ASSERT_TRUE(verdict.timing.has_value());
  EXPECT_GT(verdict.timing->speedup.median, 0.0);
  EXPECT_LE(verdict.timing->speedup.low, verdict.timing->speedup.median);
  EXPECT_GE(verdict.timing->speedup.high, verdict.timing->speedup.median);
  EXPECT_GE(verdict.timing->candidate_us.samples, 5u);
  const std::set<std::string> comparisons = {"faster", "slower", "tie"};
  EXPECT_TRUE(comparisons.contains(verdict.timing->comparison)) << verdict.timing->comparison;
  EXPECT_TRUE(verdict.ToJson().contains("speedup"));
  const StageRecord* timing = FindStage(verdict, "timing");
  ASSERT_NE(timing, nullptr);
  ASSERT_NE(FindStage(verdict, "recheck"), nullptr);
  // The budget used is reported: what it was, and whether the interval, the decision or the budget ended it.
  ASSERT_TRUE(timing->details.timing.has_value());
  EXPECT_EQ(timing->details.timing->budget_s, options_.timing_budget_s);
  const std::set<std::string> reasons = {"interval", "decided", "budget"};
  EXPECT_TRUE(reasons.contains(timing->details.timing->stopped_by.value_or("")))
      << timing->details.timing->stopped_by.value_or("(none)");
}

TEST_F(CpuPipelineTest, TimingOfAClearlySlowerKernelStopsOnceTheComparisonIsDecided) {
  options_.time = true;
  options_.timing_budget_s = 5.0;  // a cap it does not reach: the slower kernel is decided first
  // Every element recomputed 64 times through a volatile: many times slower than the baseline.
  const std::string slow = Kernel(
      "for (int64_t i = 0; i < n; ++i) { volatile float s = 0; for (int r = 0; r < 64; ++r) s = a[i] + b[i]; c[i] = s; }");
  const Verdict verdict = Evaluate(slow);
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << Describe(verdict);
  ASSERT_TRUE(verdict.timing.has_value());
  EXPECT_EQ(verdict.timing->comparison, "slower");
  const StageRecord* timing = FindStage(verdict, "timing");
  ASSERT_NE(timing, nullptr);
  ASSERT_TRUE(timing->details.timing.has_value());
  EXPECT_EQ(timing->details.timing->stopped_by.value_or(""), "decided") << Describe(verdict);
  EXPECT_LT(timing->seconds, 5.0);

  // Without the tie band only the target or the budget ends the loop.
  options_.tie_band = 0;
  options_.timing_budget_s = 0.3;
  const Verdict full = Evaluate(slow);
  const StageRecord* full_timing = FindStage(full, "timing");
  ASSERT_NE(full_timing, nullptr);
  ASSERT_TRUE(full_timing->details.timing.has_value());
  EXPECT_NE(full_timing->details.timing->stopped_by.value_or(""), "decided");
}

TEST_F(CpuPipelineTest, EmptySourceIsACompileError) {
  const Verdict verdict = Evaluate("  \n\t\n");
  EXPECT_EQ(verdict.status, VerdictStatus::kCompileError) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("empty"), std::string::npos) << verdict.reason;
}

TEST_F(CpuPipelineTest, ForbiddenIncludeIsAnIntegrityViolationBeforeAnyBuild) {
  const Verdict verdict = Evaluate(Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];", "#include <fstream>\n"));
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << Describe(verdict);
  const StageRecord* audit = FindStage(verdict, "audit");
  ASSERT_NE(audit, nullptr);
  EXPECT_EQ(audit->outcome, "failed");
  EXPECT_FALSE(audit->details.findings.empty());
  ASSERT_TRUE(audit->details.failure.has_value());
  EXPECT_EQ(audit->details.failure->kind, FailureKind::kContractFinding);
  EXPECT_EQ(FindStage(verdict, "build"), nullptr);
}

TEST_F(CpuPipelineTest, SyntaxErrorIsACompileErrorWithTheLogAndTheExpectedSignature) {
  const Verdict verdict = Evaluate(Kernel("c[0] = a[0] +;"));
  EXPECT_EQ(verdict.status, VerdictStatus::kCompileError) << Describe(verdict);
  const StageRecord* build = FindStage(verdict, "build");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->outcome, "failed");
  const std::string log = build->details.log;
  EXPECT_NE(log.find("error"), std::string::npos) << log;
  EXPECT_EQ(build->details.expected_signature, task_.signature.Declaration());
  EXPECT_FALSE(build->details.diagnostics.empty()) << log;
  EXPECT_NE(verdict.Render().find(task_.signature.Declaration()), std::string::npos) << verdict.Render();
}

TEST_F(CpuPipelineTest, MissingFunctionSaysTheCandidateDoesNotDefineIt) {
  const Verdict verdict = Evaluate("#include <cstdint>\nextern \"C\" void vector_sum(const float*, const float*, float*, int64_t) {}\n");
  EXPECT_EQ(verdict.status, VerdictStatus::kCompileError) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("does not define"), std::string::npos) << verdict.reason;
}

TEST_F(CpuPipelineTest, WrongResultIsAWrongOutput) {
  const Verdict verdict = Evaluate(Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];"));
  EXPECT_EQ(verdict.status, VerdictStatus::kWrongOutput) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("wrong output"), std::string::npos) << verdict.reason;
  // What failed is in fields: the case in parts and the output's numbers.
  const StageRecord* failed = verdict.FailedStage();
  ASSERT_NE(failed, nullptr);
  ASSERT_TRUE(failed->details.failure.has_value());
  const Failure& failure = *failed->details.failure;
  EXPECT_EQ(failure.kind, FailureKind::kWrongOutput);
  ASSERT_TRUE(failure.at.has_value());
  EXPECT_EQ(failure.at->shape.rfind("n=", 0), 0u) << failure.at->shape;
  EXPECT_GT(failure.at->smallest_dim, 0);
  EXPECT_FALSE(failure.at->distribution.empty());
  EXPECT_NE(verdict.reason.find(failure.at->label), std::string::npos);
  ASSERT_TRUE(failure.mismatch.has_value());
  EXPECT_EQ(failure.mismatch->output, "c");
  EXPECT_GT(failure.mismatch->norm_error, failure.mismatch->norm_bound);
  // And it reads back from the JSON as it was.
  const auto read = Verdict::FromJson(verdict.ToJson());
  ASSERT_TRUE(read.ok());
  ASSERT_NE(read->FailedStage(), nullptr);
  EXPECT_EQ(read->FailedStage()->details.ToJson(), failed->details.ToJson());
}

// A wrong output no longer ends the stage: every case is judged and counted, and the verdict is
// still the first wrong case's.
TEST_F(CpuPipelineTest, AKernelWrongEverywhereHasEveryCaseCounted) {
  const Verdict verdict = Evaluate(Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];"));
  ASSERT_EQ(verdict.status, VerdictStatus::kWrongOutput) << Describe(verdict);
  const StageRecord* failed = verdict.FailedStage();
  ASSERT_NE(failed, nullptr);
  ASSERT_TRUE(failed->details.check && failed->details.check->tally) << failed->details.ToJson().dump();
  const CaseTally& tally = *failed->details.check->tally;
  EXPECT_GT(tally.planned, 8) << "4 eval shapes x 2 distributions, random shapes, the bench shape";
  EXPECT_EQ(tally.judged, tally.planned);
  EXPECT_EQ(tally.failed, tally.judged);
  EXPECT_EQ(tally.stopped, "");
  EXPECT_EQ(failed->details.failure->at->label, verdict.reason.substr(16, failed->details.failure->at->label.size()))
      << "the first case, named at the start of the reason: " << verdict.reason;
  EXPECT_NE(verdict.reason.find(fmt::format("; wrong on {} of {} cases", tally.failed, tally.judged)), std::string::npos)
      << verdict.reason;
}

TEST_F(CpuPipelineTest, AKernelWrongOnlyOnTinyShapesHasTheRestCountedAsPassing) {
  const Verdict verdict = Evaluate(Kernel("for (int64_t i = 0; i < n; ++i) c[i] = n < 8 ? 0.0f : a[i] + b[i];"));
  ASSERT_EQ(verdict.status, VerdictStatus::kWrongOutput) << Describe(verdict);
  const auto& tally = verdict.FailedStage()->details.check->tally;
  ASSERT_TRUE(tally.has_value());
  EXPECT_EQ(tally->judged, tally->planned);
  EXPECT_GT(tally->failed, 0);
  EXPECT_LT(tally->failed, tally->judged);
  for (const CaseGroup& group : tally->groups) {
    EXPECT_EQ(group.failed > 0, group.smallest_dim < 8) << group.ToJson().dump();
  }
}

TEST_F(CpuPipelineTest, WritingOutOfBoundsIsAnIntegrityViolation) {
  const Verdict verdict = Evaluate(Kernel("for (int64_t i = 0; i <= n; ++i) c[i] = a[i] + b[i];"));
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("out of bounds"), std::string::npos) << verdict.reason;
  ASSERT_NE(verdict.FailedStage(), nullptr);
  ASSERT_TRUE(verdict.FailedStage()->details.failure.has_value());
  EXPECT_EQ(verdict.FailedStage()->details.failure->kind, FailureKind::kOutOfBounds);
  // Which zone, as fields: c[n] is the first element past the end.
  const auto& guard = verdict.FailedStage()->details.failure->guard;
  ASSERT_TRUE(guard.has_value());
  EXPECT_EQ(guard->tensor, "c");
  EXPECT_EQ(guard->side, "after");
  EXPECT_EQ(guard->offset, 4 * guard->element);
}

TEST_F(CpuPipelineTest, ModifyingAnInputIsAnIntegrityViolation) {
  const Verdict verdict = Evaluate(Kernel(
      "for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];\n  const_cast<float*>(a)[0] = 0.0f;"));
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("modified its input 'a'"), std::string::npos) << verdict.reason;
}

TEST_F(CpuPipelineTest, CrashingKernelIsARuntimeError) {
  const Verdict verdict = Evaluate(Kernel("if (n > 5) *static_cast<volatile float*>(nullptr) = a[0];\n  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];"));
  EXPECT_EQ(verdict.status, VerdictStatus::kRuntimeError) << Describe(verdict);
  EXPECT_NE(verdict.reason.find("SIGSEGV"), std::string::npos) << verdict.reason;
  ASSERT_NE(verdict.FailedStage(), nullptr);
  const auto& failure = verdict.FailedStage()->details.failure;
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->kind, FailureKind::kWorkerCrashed);
  EXPECT_EQ(failure->signal, SIGSEGV);
  ASSERT_TRUE(failure->at.has_value()) << "the case the worker was running";
  EXPECT_GT(failure->at->smallest_dim, 5);
  // The cases before it, all with n <= 5, passed: the tally holds them.
  const auto& tally = verdict.FailedStage()->details.check->tally;
  ASSERT_TRUE(tally.has_value());
  EXPECT_GT(tally->judged, 0);
  EXPECT_EQ(tally->failed, 0);
  for (const CaseGroup& group : tally->groups) EXPECT_LE(group.smallest_dim, 5) << group.ToJson().dump();
  EXPECT_EQ(tally->stopped.rfind("runtime_error: ", 0), 0u) << tally->stopped;
}

TEST_F(CpuPipelineTest, HangingKernelIsATimeout) {
  options_.call_timeout = std::chrono::milliseconds(300);
  const Verdict verdict = Evaluate(Kernel("for (volatile int64_t i = 0; i < n || true; i = i + 1) {}"));
  EXPECT_EQ(verdict.status, VerdictStatus::kTimeout) << Describe(verdict);
}

TEST_F(CpuPipelineTest, ImportingFopenIsCaughtByTheBinaryAudit) {
  const Verdict verdict = Evaluate(Kernel(
      "std::FILE* f = std::fopen(\"/etc/hostname\", \"r\"); if (f) std::fclose(f);\n"
      "  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];",
      "#include <cstdio>\n"));
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << Describe(verdict);
  const StageRecord* binary = FindStage(verdict, "binary_audit");
  ASSERT_NE(binary, nullptr) << Describe(verdict);
  EXPECT_NE(binary->details.ToJson().dump().find("fopen"), std::string::npos);
}

TEST_F(CpuPipelineTest, WithoutTheSandboxTheVerdictSaysSo) {
  options_.sandbox = false;
  const Verdict verdict = Evaluate(kHonest);
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << Describe(verdict);
  EXPECT_FALSE(verdict.provenance.at("protections").value("seccomp", true));
  EXPECT_NE(verdict.provenance.at("protections").dump().find("sandbox disabled"), std::string::npos);
}

TEST_F(CpuPipelineTest, CancellingMidRunStopsTheWorkerAndLeavesNoneBehind) {
  options_.call_timeout = std::chrono::milliseconds(60'000);
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  std::thread canceller([&cancel] {
    // Well into the correctness stage, where the hanging kernel spins in the worker.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const Verdict verdict = Evaluate(Kernel("for (volatile int64_t i = 0; i < n || true; i = i + 1) {}"));
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError) << Describe(verdict);
  EXPECT_EQ(verdict.reason, "the evaluation was cancelled");
  EXPECT_TRUE(testing::ChildProcessesRunning(KSMITH_WORKER_PATH).empty()) << "a worker outlived its evaluation";
}

}  // namespace
}  // namespace ksmith
