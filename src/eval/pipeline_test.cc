// The pipeline driver with the in-process test backend: the order of the stages, the status of
// every kind of failure, provenance, and cancellation.
#include "eval/pipeline.h"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "eval/backend_registry.h"
#include "task/task_loader.h"
#include "testing/in_process_backend.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> StageNames(const Verdict& verdict) {
  std::vector<std::string> names;
  for (const auto& stage : verdict.stages) names.push_back(stage.name);
  return names;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    testing::RegisterInProcessBackend();
    BackendConfig config;
    config.cache_directory = temp_.path();
    auto backend = BackendRegistry::Global().Create(testing::kInProcessBackend, config);
    ASSERT_TRUE(backend.ok()) << backend.error().message;
    backend_ = std::move(backend.value());
    auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::move(task.value());
    options_.call_timeout = std::chrono::milliseconds(200);
  }

  Verdict Evaluate(const std::string& source) {
    return Pipeline(*backend_, pool_).Evaluate(task_, {"candidate.txt", source}, options_);
  }

  ScopedTempDir temp_{"ksmith-pipeline"};
  std::unique_ptr<EvalBackend> backend_;
  CompilePool pool_{2};
  Task task_;
  EvalOptions options_;
};

TEST_F(PipelineTest, RunsTheStagesInOrderAndPassesAnHonestKernel) {
  const Verdict verdict = Evaluate("add");
  EXPECT_EQ(verdict.status, VerdictStatus::kPassed) << verdict.reason;
  EXPECT_EQ(StageNames(verdict),
            (std::vector<std::string>{"audit", "build", "trusted_build", "correctness", "timing", "release"}));
  EXPECT_EQ(verdict.backend, testing::kInProcessBackend);
  for (const auto& stage : verdict.stages) EXPECT_EQ(stage.outcome, "ok") << stage.name;
}

TEST_F(PipelineTest, ASassSummaryReadBesideVerificationLandsInTheBuildStage) {
  // The summary is ready only once verification has started: waiting for it first would fail.
  const Verdict verdict = Evaluate("add slow-sass");
  EXPECT_EQ(verdict.status, VerdictStatus::kPassed) << verdict.reason;
  const auto& build = verdict.stages.at(1);
  ASSERT_EQ(build.name, "build");
  ASSERT_TRUE(build.details.build && build.details.build->sass);
  EXPECT_EQ(build.details.build->sass->error, "");
  ASSERT_EQ(build.details.build->sass->kernels.size(), 1u);
  EXPECT_EQ(build.details.build->sass->kernels[0].name, "read beside verification");
}

TEST_F(PipelineTest, EveryFailureEndsTheVerdictAtItsStageWithItsStatus) {
  struct Case {
    std::string source;
    VerdictStatus status;
    std::string last_stage;
  };
  const std::vector<Case> cases = {
      {"  \n", VerdictStatus::kCompileError, "build"},
      {"forbidden add", VerdictStatus::kIntegrityViolation, "audit"},
      {"syntax-error", VerdictStatus::kCompileError, "build"},
      {"imports-fopen", VerdictStatus::kIntegrityViolation, "binary_audit"},
      {"sub", VerdictStatus::kWrongOutput, "release"},
      {"crash", VerdictStatus::kRuntimeError, "release"},
      {"hang", VerdictStatus::kTimeout, "release"},
      {"throw", VerdictStatus::kInfraError, "correctness"},
  };
  for (const auto& test : cases) {
    const Verdict verdict = Evaluate(test.source);
    EXPECT_EQ(verdict.status, test.status) << test.source << ": " << verdict.reason;
    ASSERT_FALSE(verdict.stages.empty()) << test.source;
    EXPECT_EQ(verdict.stages.back().name, test.last_stage) << test.source;
    EXPECT_FALSE(verdict.reason.empty()) << test.source;
  }
}

TEST_F(PipelineTest, ACompileErrorQuotesTheDeclarationTheCandidateMustDefine) {
  const Verdict verdict = Evaluate("syntax-error");
  ASSERT_EQ(verdict.status, VerdictStatus::kCompileError);
  EXPECT_NE(verdict.stages.back().details.expected_signature.find("void vector_add("), std::string::npos);
  EXPECT_NE(verdict.Render().find("must define:\n  extern \"C\" void vector_add("), std::string::npos)
      << verdict.Render();
}

TEST_F(PipelineTest, ABugInTheBackendIsAnInfraErrorThatSaysWhere) {
  const Verdict verdict = Evaluate("throw");
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError);
  EXPECT_NE(verdict.reason.find("internal error in the evaluator during correctness"), std::string::npos)
      << verdict.reason;
}

TEST_F(PipelineTest, ATaskTheBackendCannotRunIsAnInfraErrorNotTheCandidates) {
  auto softmax = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "normalization" / "softmax");
  ASSERT_TRUE(softmax.ok());
  const Verdict verdict = Pipeline(*backend_, pool_).Evaluate(*softmax, {"candidate.txt", "add"}, options_);
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError);
  EXPECT_NE(verdict.reason.find("only vector_add"), std::string::npos) << verdict.reason;
}

TEST_F(PipelineTest, ProvenanceHoldsTheSeedsHashTheCandidatesHashAndTheBackendsOwnFacts) {
  options_.fixed_seed = 7;
  const Verdict first = Evaluate("add");
  const Verdict second = Evaluate("add");
  EXPECT_EQ(first.provenance.value("compiler", ""), "in-process");
  EXPECT_TRUE(first.provenance.value("seed_fixed_by_user", false));
  EXPECT_EQ(first.provenance.value("secret_seed_sha256", "a"), second.provenance.value("secret_seed_sha256", "b"));
  options_.fixed_seed.reset();
  const Verdict secret = Evaluate("add");
  EXPECT_NE(secret.provenance.value("secret_seed_sha256", ""), first.provenance.value("secret_seed_sha256", ""));
  EXPECT_FALSE(secret.provenance.value("seed_fixed_by_user", true));
}

TEST_F(PipelineTest, APrestartedBuildIsTheOneUsed) {
  Pipeline pipeline(*backend_, pool_);
  const CandidateSource candidate{"candidate.txt", "add", 0};
  auto build = pipeline.StartBuild(task_, candidate);
  ASSERT_TRUE(build.valid());
  const Verdict verdict = pipeline.Evaluate(task_, candidate, options_, std::move(build));
  EXPECT_EQ(verdict.status, VerdictStatus::kPassed);
  EXPECT_FALSE(pipeline.StartBuild(task_, {"empty.txt", "", 0}).valid()) << "an unusable source is never built";
}

TEST_F(PipelineTest, CancellingMidVerificationEndsWithAnInfraErrorSoon) {
  options_.call_timeout = std::chrono::milliseconds(60'000);
  std::atomic<bool> cancel{false};
  options_.cancel = &cancel;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const Verdict verdict = Evaluate("hang");
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError);
  EXPECT_EQ(verdict.reason, "the evaluation was cancelled");
}

TEST_F(PipelineTest, ACancelledEvaluationStopsBeforeTheNextStage) {
  std::atomic<bool> cancel{true};
  options_.cancel = &cancel;
  const Verdict verdict = Evaluate("add");
  EXPECT_EQ(verdict.status, VerdictStatus::kInfraError);
  EXPECT_EQ(verdict.reason, "the evaluation was cancelled");
  EXPECT_EQ(StageNames(verdict), (std::vector<std::string>{"audit", "build"}));
}

TEST(BackendRegistry, FindsBackendsByNameAndRefusesDuplicatesAndUnknownNames) {
  testing::RegisterInProcessBackend();
  BackendRegistry& registry = BackendRegistry::Global();
  const auto names = registry.Names();
  EXPECT_EQ(names.at(0), "cpu");
  EXPECT_EQ(names.at(1), "cuda");
  EXPECT_EQ(names.at(2), "opencl");
  EXPECT_FALSE(registry.Register(testing::InProcessBackendEntry()).ok());
  auto unknown = registry.Traits("metal");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("choose cpu, cuda, opencl"), std::string::npos) << unknown.error().message;
  EXPECT_EQ(TraitsOf("opencl").source_extension, ".cl");
  EXPECT_EQ(TraitsOf("cuda").source_extension, ".cu");
  EXPECT_TRUE(TraitsOf("cuda").reports_kernel_resources);
  EXPECT_EQ(TraitsOf("cuda").device_key, "gpu");
  EXPECT_EQ(TraitsOf("cpu").fence_language, "cpp");
  EXPECT_EQ(TraitsOf("stored-by-another-build").source_extension, ".cc");
}

}  // namespace
}  // namespace ksmith
