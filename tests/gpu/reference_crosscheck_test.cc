// Every CUDA verdict is judged against the task's GPU reference (reference.cu), so it must agree
// with the CPU reference (reference.cc) that the CPU backend trusts: both in double precision, on
// every dev shape and the smaller GPU eval shapes, under every distribution. The GPU reference runs
// through `ksmith-cuda-worker --replay`, the CPU one in this process (backends/cuda/gpu_reference.h, which
// `ksmith tasks check` uses too).
#include <gtest/gtest.h>

#include "../integration/cli_runner.h"
#include "../integration/kernel_header.h"
#include "backends/cpu/compiler.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/gpu_reference.h"
#include "backends/cuda/nvcc_compiler.h"
#include "binary/shared_library.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

class ReferenceCrossCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceCrossCheck, GpuReferenceAgreesWithTheCpuReference) {
  const fs::path worker = BuildDir() / "ksmith-cuda-worker";
  if (const std::string why = WhyNoGpu(worker); !why.empty()) GTEST_SKIP() << why;
  TaskRegistry registry(SourceDir() / "tasks");
  auto task = registry.Find(GetParam());
  ASSERT_TRUE(task.ok()) << task.error().message;
  const Task view = CudaView(*task);
  auto target = ResolveCudaTarget(std::nullopt);
  ASSERT_TRUE(target.ok());
  auto nvcc = NvccCompiler::Create(CacheDir(), *target);
  ASSERT_TRUE(nvcc.ok()) << nvcc.error().message;
  auto gpu_build = nvcc->Build(view, {Slurp(view.cuda->reference_source), "reference.cu", KernelRole::kReference, {}});
  ASSERT_TRUE(gpu_build.ok() && gpu_build->compiled) << (gpu_build.ok() ? gpu_build->log : gpu_build.error().message);
  auto cpu = CpuCompiler::Create(CacheDir());
  ASSERT_TRUE(cpu.ok());
  auto cpu_build = cpu->Build(view, {Slurp(view.reference_source), "reference.cc", KernelRole::kReference, {}});
  ASSERT_TRUE(cpu_build.ok() && cpu_build->compiled);
  auto library = SharedLibrary::Open(cpu_build->shared_object);
  ASSERT_TRUE(library.ok());
  auto cpu_reference = (*library)->Entry();
  ASSERT_TRUE(cpu_reference.ok());

  auto agreement = CrossCheckGpuReference(view, *cpu_reference, gpu_build->shared_object, worker, CacheDir());
  ASSERT_TRUE(agreement.ok()) << agreement.error().message;
  EXPECT_EQ(agreement->disagreement, "");
  EXPECT_GT(agreement->cases, 4);
}

INSTANTIATE_TEST_SUITE_P(Tasks, ReferenceCrossCheck, ::testing::ValuesIn(TaskNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ksmith::it
