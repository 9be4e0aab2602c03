// The cuda backend where CI runs: no GPU, but nvcc. Every CUDA kernel of the project (tasks'
// references and baselines, honest and red-team kernels) compiles as the evaluator would build
// it, and `ksmith eval --backend cuda` says in one line why it cannot run here.
#include <gtest/gtest.h>

#include <future>

#include "backend/cuda/build_pool.h"
#include "backend/cuda/nvcc_compiler.h"
#include "cli_runner.h"
#include "core/files.h"
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

TEST(CudaKernelSuite, IsWellFormedAndCoversEveryStatus) {
  const auto kernels = AllCudaKernels();
  std::set<std::string> statuses;
  std::set<std::string> honest_tasks;
  for (const auto& kernel : kernels) {
    EXPECT_EQ(kernel.problem, "") << kernel.file;
    statuses.insert(kernel.expect);
    if (kernel.expect == "passed") honest_tasks.insert(kernel.task);
  }
  EXPECT_EQ(honest_tasks.size(), TaskNames().size()) << "every task needs honest CUDA kernels";
  for (const char* status : {"passed", "runtime_error", "timeout", "wrong_output", "integrity_violation"}) {
    EXPECT_TRUE(statuses.count(status)) << "no CUDA kernel expects " << status;
  }
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
      if (item.has_kernels) EXPECT_FALSE(build->resources.empty()) << item.what << ": no ptxas resource report";
    }
  }
}

TEST(CudaCli, WithoutAGpuSaysSoInOneLine) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has a GPU; the gpu tests cover it";
  const CliResult run = RunKsmith({"eval", "--backend", "cuda", "--task", "vector_add",
                                   (CudaKernelDir() / "honest" / "vector_add_fast.cu").string()});
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  EXPECT_EQ(run.signal, 0) << run.Describe();
  EXPECT_TRUE(run.out.empty()) << run.Describe();
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.Describe();
  EXPECT_TRUE(run.err.find("GPU") != std::string::npos || run.err.find("not built") != std::string::npos)
      << run.Describe();
}

TEST(CudaCli, ProfileNeedsTheCudaBackend) {
  const CliResult run = RunKsmith({"eval", "--profile", "--task", "vector_add",
                                   (HonestDir() / "vector_add_fast.cpp").string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("--profile needs --backend cuda"), std::string::npos) << run.Describe();
}

}  // namespace
}  // namespace ksmith::it
