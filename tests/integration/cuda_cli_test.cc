// The cuda backend where CI runs: no GPU, but nvcc. The CUDA kernel suite is well formed, and
// `ksmith eval --backend cuda` says in one line why it cannot run here. (cuda_compile_test.cc
// compiles every kernel.)
#include <gtest/gtest.h>


#include "cli_runner.h"
#include "cuda_kernels.h"

namespace ksmith::it {
namespace {

TEST(CudaKernelSuite, IsWellFormedAndCoversEveryStatus) {
  const auto kernels = AllCudaKernels();
  std::set<std::string> statuses;
  std::set<std::string> honest_tasks;
  for (const auto& kernel : kernels) {
    EXPECT_EQ(kernel.problem, "") << kernel.file;
    statuses.insert(kernel.expect);
    if (kernel.expect == "passed") honest_tasks.insert(kernel.task);
  }
  // The first 13 tasks have honest CUDA kernels; every task's CUDA seed is checked on the GPU too
  // (tests/gpu/cuda_seed_test.cc).
  EXPECT_GE(honest_tasks.size(), 13u);
  const auto names = TaskNames();
  for (const auto& task : honest_tasks) {
    EXPECT_TRUE(std::find(names.begin(), names.end(), task) != names.end()) << task << " is no task";
  }
  for (const char* status : {"passed", "runtime_error", "timeout", "wrong_output", "integrity_violation"}) {
    EXPECT_TRUE(statuses.count(status)) << "no CUDA kernel expects " << status;
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
