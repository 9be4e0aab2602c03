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

}  // namespace
}  // namespace ksmith::it
