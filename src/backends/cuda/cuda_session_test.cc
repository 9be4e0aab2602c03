// The CUDA session on a machine without a GPU: the real session, protocol, shared case memory and
// judgments, against ksmith-fake-cuda-worker (testing/host_cuda_worker.h), which serves the CUDA
// worker's protocol on the host with host builds of the task's kernels. Each test makes the
// candidate's worker report one thing a GPU worker reports about a misbehaving kernel, and checks
// the verdict the session draws from it; tests/gpu/ runs the same session on a real GPU.
#include "backends/cuda/cuda_session.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/compiler.h"
#include "core/files.h"
#include "testing/small_task.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHonest = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";

// The task and its three host builds are made once for the suite: every test judges the same
// honest kernel, and only what the candidate's worker reports differs.
struct Built {
  ScopedTempDir folder{"ksmith-cuda-session"};
  Task task;
  fs::path candidate, baseline, reference;
};

class CudaSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    built_ = new Built();
    ASSERT_TRUE(built_->folder.ok());
    auto written = testing::WriteSmallVectorAdd(built_->folder.path() / "tasks");
    ASSERT_TRUE(written.ok()) << written.error().message;
    built_->task = std::move(written.value());
    Task& task = built_->task;
    task.baselines["cuda"] = task.baselines.at("cpu");  // the host build stands in for the GPU's
    auto compiler = CpuCompiler::Create(built_->folder.path() / "cache");
    ASSERT_TRUE(compiler.ok()) << compiler.error().message;
    built_->candidate = Build(*compiler, task, kHonest, KernelRole::kCandidate);
    built_->reference = Build(*compiler, task, Read(task.reference_source), KernelRole::kReference);
    const BaselineSpec& baseline = task.baselines.at("cpu");
    built_->baseline = Build(*compiler, task, Read(baseline.source), KernelRole::kBaseline, baseline.libraries);
  }
  static void TearDownTestSuite() {
    delete built_;
    built_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(fs::exists(KSMITH_FAKE_CUDA_WORKER_PATH)) << KSMITH_FAKE_CUDA_WORKER_PATH;
    ASSERT_NE(built_, nullptr);
    ASSERT_FALSE(built_->candidate.empty() || built_->baseline.empty() || built_->reference.empty());
    ASSERT_TRUE(scratch_.ok());
    options_.seeds = 1;
    options_.threads = 1;
    options_.call_timeout = std::chrono::milliseconds(2000);
    options_.timing_budget_s = 0.1;
    options_.fixed_seed = 7;
    options_.worker_executable = KSMITH_FAKE_CUDA_WORKER_PATH;
    options_.scratch_parent = scratch_.path();
  }

  static std::string Read(const fs::path& path) {
    auto text = ReadFile(path);
    EXPECT_TRUE(text.ok()) << path;
    return text.ok() ? *text : std::string();
  }

  static fs::path Build(const CpuCompiler& compiler, const Task& task, const std::string& source, KernelRole role,
                        std::vector<std::string> libraries = {}) {
    auto built = compiler.Build(task, {source, "kernel.cc", role, std::move(libraries)});
    EXPECT_TRUE(built.ok() && built->compiled) << (built.ok() ? built->log : built.error().message);
    return built.ok() ? built->shared_object : fs::path();
  }

  // One verification with the candidate's worker misbehaving as `fault` says (empty: not at all).
  Verdict Verify(const std::string& fault = "", bool second_baseline = false) {
    options_.worker_environment = fault.empty() ? std::vector<std::string>{}
                                                : std::vector<std::string>{"KSMITH_FAKE_CUDA_FAULT=" + fault};
    GpuFacts gpu;
    gpu.name = "host stand-in";
    gpu.copy_bandwidth_gbps = 1e6;  // no host call comes near: the physical limit holds
    gpu.fp32_tflops = 1e6;
    gpu.bf16_tensor_tflops = 1e6;
    std::promise<std::optional<GpuFacts>> facts;
    facts.set_value(gpu);
    Verdict verdict;
    verdict.backend = "cuda";
    CudaSession session(built_->task, options_, facts.get_future().share(), verdict, 7, CudaWorkers::Start(options_));
    if (second_baseline) {
      TrustedBuild trusted;
      trusted.second.library = built_->baseline;  // the same host build, loaded as the second
      trusted.second.description = "the baseline again, as a second";
      session.SetSecondBaseline(trusted);
    }
    session.Run(built_->candidate, built_->baseline, built_->reference);
    return verdict;
  }

  static std::vector<std::string> StageNames(const Verdict& verdict) {
    std::vector<std::string> names;
    for (const auto& stage : verdict.stages) names.push_back(stage.name);
    return names;
  }

  static Built* built_;
  ScopedTempDir scratch_{"ksmith-cuda-session-scratch"};
  EvalOptions options_;
};

Built* CudaSessionTest::built_ = nullptr;

TEST_F(CudaSessionTest, AnHonestKernelPassesEveryStageInTheBackendsOrder) {
  // ksmith's own format: the hidden shapes are correctness cases, not a stage of their own.
  const Verdict verdict = Verify();
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << verdict.Render();
  EXPECT_EQ(StageNames(verdict), (std::vector<std::string>{"sandbox", "correctness", "idle_check", "timing", "recheck",
                                                           "physical_limit", "close"}));
  ASSERT_TRUE(verdict.timing.has_value());
  EXPECT_GT(verdict.timing->candidate_us.median, 0);
  const StageRecord* recheck = verdict.FindStage(StageId::kRecheck);
  ASSERT_NE(recheck, nullptr);
  ASSERT_TRUE(recheck->details.check.has_value());
  EXPECT_GT(recheck->details.check->extra_calls.value_or(0), 0);
}

TEST_F(CudaSessionTest, WithoutTimingTheTimedStagesAreLeftOut) {
  options_.time = false;
  const Verdict verdict = Verify();
  ASSERT_EQ(verdict.status, VerdictStatus::kPassed) << verdict.Render();
  EXPECT_EQ(StageNames(verdict), (std::vector<std::string>{"sandbox", "correctness", "idle_check", "close"}));
  EXPECT_FALSE(verdict.timing.has_value());
}

TEST_F(CudaSessionTest, AFixedShapeCandidatesHiddenShapesAreAPropertyThatCannotFailIt) {
  // A KernelBench-format candidate is decided at the bench shape; the hidden shapes come after
  // every deciding stage. Its worker dying there ends the session (no close) with the verdict
  // passed and the property recorded.
  options_.hidden_shapes_decide = false;
  const Verdict passing = Verify();
  ASSERT_EQ(passing.status, VerdictStatus::kPassed) << passing.Render();
  EXPECT_EQ(StageNames(passing), (std::vector<std::string>{"sandbox", "correctness", "idle_check", "timing", "recheck",
                                                           "physical_limit", "hidden_shapes", "close"}));
  ASSERT_TRUE(passing.extensions.generalization.has_value());
  EXPECT_EQ(passing.extensions.generalization->generalizes, true);

  const Verdict crashed = Verify("crash_at_new_shape");
  ASSERT_EQ(crashed.status, VerdictStatus::kPassed) << crashed.Render();
  EXPECT_EQ(StageNames(crashed).back(), "hidden_shapes");
  ASSERT_TRUE(crashed.extensions.generalization.has_value());
  EXPECT_EQ(crashed.extensions.generalization->generalizes, false);
  EXPECT_NE(crashed.extensions.generalization->reason.find("SIGSEGV"), std::string::npos)
      << crashed.extensions.generalization->reason;
}

TEST_F(CudaSessionTest, ACandidateThatDoesNotLoadIsItsRuntimeError) {
  const Verdict verdict = Verify("load_error");
  EXPECT_EQ(verdict.status, VerdictStatus::kRuntimeError) << verdict.Render();
  EXPECT_NE(verdict.reason.find("could not be loaded"), std::string::npos) << verdict.reason;
}

TEST_F(CudaSessionTest, ADeviceThatDoesNotStartIsTheMachinesError) {
  const Verdict verdict = Verify("no_device");
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError) << verdict.Render();
  EXPECT_NE(verdict.reason.find("could not start"), std::string::npos) << verdict.reason;
}

TEST_F(CudaSessionTest, ACudaErrorIsARuntimeErrorNamingTheCase) {
  const Verdict verdict = Verify("cuda_error@2");
  EXPECT_EQ(verdict.status, VerdictStatus::kRuntimeError) << verdict.Render();
  EXPECT_NE(verdict.reason.find("illegal memory access"), std::string::npos) << verdict.reason;
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kCorrectness));
  const auto& failure = verdict.FailedStage()->details.failure;
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->kind, FailureKind::kCudaError);
  ASSERT_TRUE(failure->at.has_value());
  EXPECT_NE(verdict.reason.find(failure->at->label), std::string::npos) << verdict.reason;
}

TEST_F(CudaSessionTest, AWorkerThatDiesInACallIsARuntimeError) {
  const Verdict verdict = Verify("crash@1");
  EXPECT_EQ(verdict.status, VerdictStatus::kRuntimeError) << verdict.Render();
  EXPECT_NE(verdict.reason.find("SIGSEGV"), std::string::npos) << verdict.reason;
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kCorrectness));
}

TEST_F(CudaSessionTest, ACallThatNeverReturnsIsATimeout) {
  options_.call_timeout = std::chrono::milliseconds(300);
  const Verdict verdict = Verify("hang@1");
  EXPECT_EQ(verdict.status, VerdictStatus::kTimeout) << verdict.Render();
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kCorrectness));
}

TEST_F(CudaSessionTest, WorkOutsideTheGivenStreamIsAnIntegrityViolation) {
  const Verdict verdict = Verify("other_stream@1");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  EXPECT_NE(verdict.reason.find("outside the given stream"), std::string::npos) << verdict.reason;
}

TEST_F(CudaSessionTest, MemoryWrittenAfterTheStreamCompletedIsAnIntegrityViolation) {
  const Verdict verdict = Verify("late_write@1");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  EXPECT_NE(verdict.reason.find("still being written"), std::string::npos) << verdict.reason;
}

TEST_F(CudaSessionTest, ZerosAreAWrongOutput) {
  const Verdict verdict = Verify("zeros@2");
  EXPECT_EQ(verdict.status, VerdictStatus::kWrongOutput) << verdict.Render();
}

TEST_F(CudaSessionTest, AKernelLaunchedAfterTheCallsReturnedIsWorkAfterReturn) {
  const Verdict verdict = Verify("idle_work");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kIdleCheck));
}

TEST_F(CudaSessionTest, OutputsThatDifferWhileTimedAreAnIntegrityViolation) {
  const Verdict verdict = Verify("timed_mismatch");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kTiming));
}

TEST_F(CudaSessionTest, CallsFarFasterOnReusedInputsAreAnIntegrityViolation) {
  const Verdict verdict = Verify("faster_on_reuse");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kTiming));
}

TEST_F(CudaSessionTest, TheSecondBaselinesTimingIsReportedAndNeverDecides) {
  const Verdict timed = Verify("", true);
  ASSERT_EQ(timed.status, VerdictStatus::kPassed) << timed.Render();
  EXPECT_EQ(StageNames(timed), (std::vector<std::string>{"sandbox", "correctness", "idle_check", "timing", "recheck",
                                                         "physical_limit", "second_timing", "close"}));
  EXPECT_TRUE(timed.extensions.second_timing.has_value());
  // Should the second baseline end the worker, only its speedup is lost: no close, still passed.
  const Verdict crashed = Verify("crash_in_second_timing", true);
  ASSERT_EQ(crashed.status, VerdictStatus::kPassed) << crashed.Render();
  EXPECT_EQ(StageNames(crashed).back(), "second_timing");
  EXPECT_FALSE(crashed.extensions.second_timing.has_value());
  const StageRecord* second = crashed.FindStage(StageId::kSecondTiming);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second->details.summary.find("not measured"), std::string::npos) << second->details.summary;
}

TEST_F(CudaSessionTest, AFaultTheStandInDoesNotKnowIsNeverAPass) {
  // The stand-in exits at once: a misspelt fault cannot let a test that expects a pass pass for
  // nothing.
  for (const char* unknown : {"state_chnage", "crash", "idle_work@2"}) {
    const Verdict verdict = Verify(unknown);
    EXPECT_NE(verdict.status, VerdictStatus::kPassed) << unknown;
  }
}

TEST_F(CudaSessionTest, TheProcessStateIsReadOnlyForACandidateWithItsOwnPython) {
  // ksmith's own contract: the candidate is its kernel, and no state report is asked for.
  EXPECT_EQ(Verify("state_change").status, VerdictStatus::kPassed);
  options_.candidate_finish = true;
  const Verdict verdict = Verify("state_change");
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation) << verdict.Render();
  ASSERT_NE(verdict.FailedStage(), nullptr);
  EXPECT_TRUE(verdict.FailedStage()->Is(StageId::kProcessState));
}

}  // namespace
}  // namespace ksmith
