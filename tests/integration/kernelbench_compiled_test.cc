// torch.compile as a KernelBench task's second baseline (kernelbench/compiled_baseline.h). Its
// timing needs the GPU and torch 2 (tests/gpu); here: the flag's usage errors, and the warm step
// run for real in the build sandbox with this machine's torch, which (Debian's 1.13) has no
// torch.compile: it must say so and cache nothing. Skips without a python3 with torch.
#include "kernelbench_import.h"
#include "core/files.h"
#include "kernelbench/candidate_build.h"
#include "kernelbench/compiled_baseline.h"
#include "task/task_loader.h"

namespace ksmith::it {
namespace {

TEST(KernelBenchCompiledBaseline, TheFlagNeedsTheGpuBackendAndSaysSo) {
  const fs::path candidate = CandidatesDir() / "modelnew" / "honest_torch_ops_kb_l0_001_linear_scale.py";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"eval", "--task", "kb_l0_001_linear_scale", "--compiled-baseline", candidate.string()},
        std::vector<std::string>{"kernelbench", "run", CandidatesDir().string(), "--compiled-baseline"}}) {
    const CliResult run = RunKsmith(command);
    EXPECT_EQ(run.exit_code, 2) << run.Describe();
    EXPECT_NE(run.err.find("ksmith: error: --compiled-baseline"), std::string::npos) << run.Describe();
    EXPECT_NE(run.err.find("add --backend cuda"), std::string::npos) << run.Describe();
  }
}

bool TorchHasCompile() {
  const std::string command = TorchPython() + " -c 'import sys, torch; sys.exit(0 if hasattr(torch, \"compile\") else 1)'";
  return std::system(command.c_str()) == 0;
}

TEST(KernelBenchCompiledBaseline, WithoutTorchCompileTheWarmStepSaysWhyAndCachesNothing) {
  SKIP_WITHOUT_TORCH();
  if (TorchHasCompile()) GTEST_SKIP() << "this torch has torch.compile: its warm step needs the GPU (tests/gpu)";
  const Imported imported = ImportOnce("test-problems", {(ProblemsDir() / "problems").string()});
  auto task = LoadTask(imported.out / "kernelbench" / "kb_l0_006_log_of_positive");
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto analysis = LoadKernelBenchAnalysis(*task);
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  ScopedTempDir cache("ksmith-compiled-baseline");
  const CompiledBaselinePlan plan = PlanCompiledBaseline(cache.path(), *analysis, *task);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto warm = WarmCompiledBaseline(plan, *analysis, *task);
    ASSERT_TRUE(warm.ok()) << warm.error().message;
    EXPECT_FALSE(warm->warmed);
    EXPECT_FALSE(warm->cache_hit) << "a failed warm step must be tried again, not cached";
    EXPECT_NE(warm->log.find("has no torch.compile"), std::string::npos) << warm->log;
    EXPECT_FALSE(fs::exists(plan.directory / "manifest.json"));
  }
}

// The runner's own logic (ksmith_kb/compiled.py) with torch.compile stood in for by a wrapper, since this
// torch has none: tests/kernelbench/scripts/kb_compiled_probe.py says what it checks.
TEST(KernelBenchCompiledBaseline, TheRunnerSetsTheCachesForItsFirstCallOnlyAnswersAsEagerAndSurvivesAFailedLoad) {
  SKIP_WITHOUT_TORCH();
  if (TorchHasCompile()) GTEST_SKIP() << "this torch has torch.compile: the GPU test runs the real one";
  const Imported imported = ImportOnce("test-problems", {(ProblemsDir() / "problems").string()});
  ScopedTempDir work("ksmith-compiled-probe");
  // A problem with weights (a Linear): they must reach the compiled model as they reach eager.
  const fs::path analysis = imported.out / "kernelbench" / "kb_l0_001_linear_scale" / "kernelbench.json";
  const std::string command = TorchPython() + " " + (SourceDir() / "tests" / "kernelbench" / "scripts" /
                                                     "kb_compiled_probe.py").string() + " " + SourceDir().string() +
                              " " + analysis.string() + " " + work.path().string() + " 2>&1";
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  for (char buffer[4096]; std::fgets(buffer, sizeof(buffer), pipe) != nullptr;) output += buffer;
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("\nOK\n"), std::string::npos) << output;
}

}  // namespace
}  // namespace ksmith::it
