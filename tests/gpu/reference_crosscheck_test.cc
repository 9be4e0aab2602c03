// Every CUDA verdict is judged against the task's GPU reference (reference.cu), so it must agree
// with the CPU reference (reference.cc) that the CPU backend trusts: both in double precision, on
// every dev shape and the smaller GPU eval shapes, under every distribution. The GPU reference runs
// through `ksmith-cuda-worker --replay`, the CPU one in this process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../integration/cli_runner.h"
#include "../integration/kernel_header.h"
#include "backend/cpu/compiler.h"
#include "backend/cpu/shared_library.h"
#include "backend/cuda/nvcc_compiler.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "eval/cases.h"
#include "eval/cuda_evaluator.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

constexpr size_t kGuardBytes = 256;
constexpr int64_t kMaxCheckedElements = int64_t{1} << 22;
// Two double-precision sums of the same terms in different orders.
constexpr double kAgreement = 1e-9;

std::string WhyNoGpu() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  return {};
}

// The GPU reference's double outputs for `prepared`'s inputs.
std::vector<std::vector<double>> RunGpuReference(const fs::path& reference_object, const PreparedCase& prepared) {
  CaseLayout layout = prepared.layout;
  for (auto& slot : layout.tensors) {
    if (slot.output) slot.bytes *= 2;
  }
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(layout));
  EXPECT_TRUE(memory.ok());
  if (!memory.ok()) return {};
  GuardedArena arena(layout, (*memory)->data());
  EXPECT_TRUE(arena.Prepare(prepared.inputs, 0x5a5a5a5a).ok());
  ScopedTempDir directory("crosscheck", CacheDir());
  fs::copy_file(reference_object, directory.path() / "kernel.so");
  EXPECT_TRUE(WriteFileAtomic(directory.path() / "layout.json", layout.ToJson().dump()).ok());
  EXPECT_TRUE(WriteFileAtomic(directory.path() / "arena.bin",
                              std::string(reinterpret_cast<const char*>((*memory)->data()), (*memory)->size()))
                  .ok());
  SpawnOptions options;
  options.argv = {(BuildDir() / "ksmith-cuda-worker").string(), "--replay", directory.path().string()};
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"}) {
    if (const char* value = std::getenv(name)) options.environment.push_back(std::string(name) + "=" + value);
  }
  auto run = RunCommand(options, std::chrono::seconds(120));
  EXPECT_TRUE(run.ok() && run->succeeded()) << (run.ok() ? run->Describe() + run->output : run.error().message);
  auto result = ReadFile(directory.path() / "result.bin");
  EXPECT_TRUE(result.ok());
  if (!result.ok() || result->size() != (*memory)->size()) return {};
  std::memcpy((*memory)->data(), result->data(), result->size());
  std::vector<std::vector<double>> outputs;
  for (const auto& slot : layout.tensors) {
    if (!slot.output) continue;
    const auto* values = static_cast<const double*>(arena.pointers()[slot.parameter]);
    outputs.emplace_back(values, values + slot.bytes / sizeof(double));
  }
  return outputs;
}

class ReferenceCrossCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceCrossCheck, GpuReferenceAgreesWithTheCpuReference) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
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

  std::vector<DimValues> shapes = view.dev_shapes;
  for (const auto& shape : view.eval_shapes) {
    if (MakeLayout(view, shape, 0).SnapshotBytes() / sizeof(float) <= kMaxCheckedElements) shapes.push_back(shape);
  }
  int checked = 0;
  for (const auto& shape : shapes) {
    for (const auto distribution : view.distributions) {
      CaseSpec spec{shape, distribution, 0x5eed0000u + static_cast<uint64_t>(checked), view.FormatShape(shape)};
      SCOPED_TRACE(spec.label + ", " + DistributionName(distribution));
      PreparedCase prepared = PrepareCase(view, spec, kGuardBytes);
      ComputeExpected(view, *cpu_reference, prepared);
      const auto gpu = RunGpuReference(gpu_build->shared_object, prepared);
      ASSERT_EQ(gpu.size(), prepared.expected.size());
      for (size_t output = 0; output < gpu.size(); ++output) {
        const auto& want = prepared.expected[output];
        ASSERT_EQ(gpu[output].size(), want.size());
        double squares = 0;
        for (double value : want) squares += value * value;
        const double rms = want.empty() ? 0 : std::sqrt(squares / want.size());
        size_t disagreements = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          if (!(std::abs(gpu[output][i] - want[i]) <= kAgreement * (std::abs(want[i]) + rms))) {
            if (disagreements++ == 0) {
              ADD_FAILURE() << "element " << i << ": GPU " << gpu[output][i] << ", CPU " << want[i];
            }
          }
        }
        EXPECT_EQ(disagreements, 0u);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 4);
}

INSTANTIATE_TEST_SUITE_P(Tasks, ReferenceCrossCheck, ::testing::ValuesIn(TaskNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ksmith::it
