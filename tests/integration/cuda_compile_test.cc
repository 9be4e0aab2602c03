// Every CUDA kernel of the project (tasks' references and baselines, honest and red-team
// kernels) compiles for Hopper as the evaluator would build it. Runs wherever nvcc is installed,
// GPU or not; alone (RUN_SERIAL), because its nvcc processes would take the cores that the timing
// tests beside it measure.
#include <gtest/gtest.h>

#include <future>

#include "backend/cuda/build_pool.h"
#include "backend/cuda/nvcc_compiler.h"
#include "cli_runner.h"
#include "cuda_kernels.h"
#include "eval/cuda_evaluator.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

std::optional<NvccCompiler> Compiler() {
  auto target = ResolveCudaTarget(std::string("sm_90a"));
  if (!target.ok()) return std::nullopt;
  auto compiler = NvccCompiler::Create(CacheDir(), *target);
  if (!compiler.ok()) return std::nullopt;
  return std::move(compiler.value());
}

TEST(CudaKernelSuite, EveryKernelCompilesForHopper) {
  auto compiler = Compiler();
  if (!compiler) GTEST_SKIP() << "nvcc is not installed here: CUDA kernels cannot be compiled";
  TaskRegistry registry(SourceDir() / "tasks");
  CudaBuildPool pool(*compiler);
  struct Pending {
    std::string what;
    bool must_compile;
    std::future<Result<CudaBuildOutput>> build;
    bool has_kernels = true;  // a cuBLAS baseline defines no kernel of its own
  };
  std::vector<Pending> pending;
  for (const auto& name : TaskNames()) {
    auto task = registry.Find(name);
    ASSERT_TRUE(task.ok()) << task.error().message;
    ASSERT_TRUE(task->cuda.has_value()) << name << " has no [cuda] table";
    const Task view = CudaView(*task);
    const auto baseline = view.baselines.at("cuda");
    pending.push_back({name + " reference", true,
                       pool.Submit(view, {Slurp(view.cuda->reference_source), "reference.cu", KernelRole::kReference, {}})});
    pending.push_back({name + " baseline", true,
                       pool.Submit(view, {Slurp(baseline.source), "baseline_cuda.cu", KernelRole::kBaseline, baseline.libraries}),
                       baseline.libraries.empty()});
  }
  for (const auto& kernel : AllCudaKernels()) {
    auto task = registry.Find(kernel.task);
    ASSERT_TRUE(task.ok()) << kernel.file;
    // Red-team kernels may fail to build on purpose (a library they may not link).
    const bool must_compile = kernel.expect == "passed";
    pending.push_back({kernel.file.filename().string(), must_compile,
                       pool.Submit(CudaView(*task), {Slurp(kernel.file), kernel.file.filename().string(),
                                                     KernelRole::kCandidate, {}})});
    if (kernel.expect == "compile_error") pending.back().must_compile = false;
  }
  for (auto& item : pending) {
    auto build = item.build.get();
    ASSERT_TRUE(build.ok()) << item.what << ": " << build.error().message;
    if (item.must_compile) {
      EXPECT_TRUE(build->compiled) << item.what << "\n" << build->log.substr(0, 4000);
      if (item.has_kernels) {
        EXPECT_FALSE(build->resources.empty()) << item.what << ": no ptxas resource report";
      }
    }
  }
}

}  // namespace
}  // namespace ksmith::it
