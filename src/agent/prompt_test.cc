// The system and task prompts: the contract, the answer format, the task's facts, and never the
// hidden shapes.
#include "agent/prompt.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/machine.h"
#include "backends/cuda/gpu_facts.h"
#include "task/registry.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

Task LoadTask(const std::string& name) {
  TaskRegistry registry(fs::path(KSMITH_SOURCE_DIR) / "tasks");
  auto task = registry.Find(name);
  if (!task.ok()) throw std::runtime_error(task.error().message);
  return *task;
}

nlohmann::json CpuFacts() {
  MachineFacts facts;
  facts.hostname = "build-host-17";
  facts.cpu_model = "AMD EPYC 9654";
  facts.cores = 2;
  facts.l1d_bytes = 32 * 1024;
  facts.l2_bytes = 1024 * 1024;
  facts.llc_bytes = 32 * 1024 * 1024;
  facts.compiler = "g++ (Debian 12.2.0-14) 12.2.0";
  facts.memory_bandwidth_gbs = 76.98;
  facts.fp32_gflops = 487.9;
  return facts.ToJson();
}

nlohmann::json H100Facts() {
  GpuFacts facts;
  facts.name = "NVIDIA H100 80GB HBM3";
  facts.uuid = "GPU-1";
  facts.compute_capability = "9.0";
  facts.sm_count = 132;
  facts.l2_bytes = 50 * 1024 * 1024;
  facts.shared_memory_per_block_bytes = 227 * 1024;
  facts.shared_memory_per_block_default_bytes = 48 * 1024;
  facts.shared_memory_per_sm_bytes = 228 * 1024;
  facts.registers_per_sm = 65536;
  facts.max_threads_per_sm = 2048;
  facts.memory_bytes = uint64_t{80} << 30;
  facts.sm_clock_max_mhz = 1980;
  facts.theoretical_bandwidth_gbps = 3352;
  facts.copy_bandwidth_gbps = 3270;
  facts.fp32_tflops = 51.0;
  facts.bf16_tensor_tflops = 700;
  return facts.ToJson();
}

TEST(SystemPrompt, CpuStatesTheContractAndAsksForOneCppBlockAfterAnExplanation) {
  const Task task = LoadTask("vector_add");
  const std::string prompt = BuildSystemPrompt({task, "cpu", CpuFacts()});
  EXPECT_TRUE(Contains(prompt, "extern \"C\""));
  EXPECT_TRUE(Contains(prompt, "only through OpenMP"));
  EXPECT_TRUE(Contains(prompt, "never read or write outside the given arrays"));
  EXPECT_TRUE(Contains(prompt, "no caching of results between calls"));
  EXPECT_TRUE(Contains(prompt, "not multiples of 8, 32 or 128"));
  EXPECT_TRUE(Contains(prompt, "First a short explanation"));
  EXPECT_TRUE(Contains(prompt, "exactly one fenced code block, ```cpp"));
  EXPECT_TRUE(Contains(prompt, "hidden shapes"));
  EXPECT_EQ(prompt.find("```cuda"), std::string::npos);
  EXPECT_EQ(prompt.find("stream"), std::string::npos) << "cpu prompts say nothing of streams";
}

TEST(SystemPrompt, CudaPutsAllWorkOnTheGivenStreamAndAsksForACudaBlock) {
  const Task task = LoadTask("softmax");
  const std::string prompt = BuildSystemPrompt({task, "cuda", H100Facts()});
  EXPECT_TRUE(Contains(prompt, "Enqueue all GPU work on `stream`"));
  // The NVRTC form is the one asked for, with an example of its two sections and its launch.
  EXPECT_TRUE(Contains(prompt, "#include <ksmith/launch.h>"));
  EXPECT_TRUE(Contains(prompt, "KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, scale_kernel<256>)(x, y, n);"));
  EXPECT_TRUE(Contains(prompt, "#ifdef KSMITH_DEVICE"));
  EXPECT_TRUE(Contains(prompt, "No other streams"));
  EXPECT_TRUE(Contains(prompt, "no driver API"));
  EXPECT_TRUE(Contains(prompt, "cuBLAS"));
  EXPECT_TRUE(Contains(prompt, "exactly one fenced code block, ```cuda"));
  EXPECT_EQ(prompt.find("OpenMP"), std::string::npos);
}

TEST(TaskPrompt, ShowsTheDeclarationTensorsDevShapesToleranceAndBaseline) {
  const Task task = LoadTask("vector_add");
  const std::string prompt = BuildTaskPrompt({task, "cpu", CpuFacts()}, "");
  EXPECT_TRUE(Contains(prompt, task.description));
  EXPECT_TRUE(Contains(prompt, "```python\nc = a + b\n```"));
  EXPECT_TRUE(Contains(
      prompt, "```cpp\nextern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n);\n```"));
  EXPECT_TRUE(Contains(prompt, "- a (input, read-only): fp32 [n]"));
  EXPECT_TRUE(Contains(prompt, "- c (output): fp32 [n]"));
  EXPECT_TRUE(Contains(prompt, "Examples to reason with: n=8; n=37."));
  EXPECT_TRUE(Contains(prompt, "normal: standard normal values"));
  EXPECT_TRUE(Contains(prompt, "large: normal values scaled by 1000"));
  EXPECT_TRUE(Contains(prompt, "Tolerance (fp32)"));
  EXPECT_TRUE(Contains(prompt, "Libraries: none that implements the operation"));
  EXPECT_TRUE(Contains(prompt, "timed against the baseline (oneDNN binary_add in fp32 on all cores, as PyTorch eager on the CPU)"));
  EXPECT_TRUE(Contains(prompt, "on the order of 10^6 elements"));
  EXPECT_EQ(prompt.find("Starting point"), std::string::npos);
}

TEST(TaskPrompt, NeverShowsAnEvalOrBenchShapeOfAnyTaskOnEitherBackend) {
  TaskRegistry registry(fs::path(KSMITH_SOURCE_DIR) / "tasks");
  auto entries = registry.List();
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  for (const auto& entry : *entries) {
    const Task task = LoadTask(entry.name);
    for (const char* backend : {"cpu", "cuda"}) {
      const std::string prompt = BuildTaskPrompt({task, backend, CpuFacts()}, "");
      std::vector<DimValues> hidden = task.eval_shapes;
      hidden.push_back(task.bench_shape);
      if (task.cuda) {
        hidden.insert(hidden.end(), task.cuda->eval_shapes.begin(), task.cuda->eval_shapes.end());
        hidden.push_back(task.cuda->bench_shape);
      }
      for (const auto& shape : hidden) {
        if (std::find(task.dev_shapes.begin(), task.dev_shapes.end(), shape) != task.dev_shapes.end()) continue;
        EXPECT_EQ(prompt.find(task.FormatShape(shape)), std::string::npos) << task.name << " " << backend;
        for (const auto& [dim, value] : shape) {
          // Larger sizes are distinctive enough to be searched for as bare numbers.
          if (value > 1000) {
            EXPECT_EQ(prompt.find(std::to_string(value)), std::string::npos) << task.name << " " << value;
          }
        }
      }
    }
  }
}

TEST(TaskPrompt, CpuDeviceFactsAndTheBoundOfTheTimedShape) {
  const Task task = LoadTask("vector_add");
  const std::string prompt = BuildTaskPrompt({task, "cpu", CpuFacts()}, "");
  EXPECT_TRUE(Contains(prompt, "- CPU: AMD EPYC 9654, 2 cores (OpenMP may use all of them)"));
  EXPECT_TRUE(Contains(prompt, "- Caches: L1d 32 KiB per core, L2 1 MiB, last level 32 MiB"));
  EXPECT_TRUE(Contains(prompt, "memory bandwidth 77.0 GB/s, FP32 488 GFLOP/s"));
  EXPECT_TRUE(Contains(prompt, "so it is memory-bound"));
  EXPECT_EQ(prompt.find("build-host-17"), std::string::npos) << "the host name is of no use to the model";
}

TEST(TaskPrompt, MatmulIsComputeBoundOnTheSameMachine) {
  const Task task = LoadTask("matmul");
  const std::string prompt = BuildTaskPrompt({task, "cpu", CpuFacts()}, "");
  EXPECT_TRUE(Contains(prompt, "so it is compute-bound"));
  // Its intensity (2mnk / 4(mk + kn + mn) = 683 at 4096^3) would give the timed size away.
  EXPECT_EQ(prompt.find("683"), std::string::npos);
}

TEST(TaskPrompt, CudaUsesTheStreamDeclarationTheGpuBaselineAndGpuFacts) {
  const Task task = LoadTask("softmax");
  const std::string prompt = BuildTaskPrompt({task, "cuda", H100Facts()}, "");
  EXPECT_TRUE(Contains(prompt, "```cuda\n" + task.CudaDeclaration() + ";\n```"));
  EXPECT_TRUE(Contains(prompt, task.baselines.at("cuda").description));
  EXPECT_TRUE(
      Contains(prompt, "- GPU: NVIDIA H100 80GB HBM3, compute capability 9.0 (sm_90), 132 SMs at up to 1980 MHz"));
  EXPECT_TRUE(Contains(prompt, "- L2 cache: 50 MiB"));
  EXPECT_TRUE(Contains(prompt, "48 KiB per block by default, up to 227 KiB per block"));
  EXPECT_TRUE(Contains(prompt, "228 KiB per SM"));
  EXPECT_TRUE(Contains(prompt, "65536 32-bit registers per SM"));
  EXPECT_TRUE(Contains(prompt, "memory bandwidth 3270 GB/s"));
  EXPECT_TRUE(Contains(prompt, "FP32 51.0 TFLOP/s"));
  EXPECT_TRUE(Contains(prompt, "so it is memory-bound"));
}

// An OpenCL device's facts as the opencl backend gives them: the device, and this machine's.
nlohmann::json PoclFacts() {
  return {{"name", "pthread-skylake-avx512-AMD EPYC"}, {"platform", "Portable Computing Language"},
          {"version", "OpenCL 3.0 PoCL"}, {"type", "cpu"}, {"compute_units", 2}, {"clock_mhz", 2096},
          {"max_work_group_size", 4096}, {"local_memory_bytes", 524288}, {"global_memory_bytes", uint64_t{10} << 30},
          {"host", CpuFacts()}};
}

TEST(SystemPrompt, OpenclStatesTheLaunchFormAndAsksForAnOpenclBlock) {
  const Task task = LoadTask("softmax");
  const std::string prompt = BuildSystemPrompt({task, "opencl", PoclFacts()});
  EXPECT_TRUE(Contains(prompt, "writes fast, correct OpenCL C kernels"));
  EXPECT_TRUE(Contains(prompt, "`// @launch <kernel> global=(<size>[, <size>[, <size>]]) local=(<size>[, ...])`"));
  EXPECT_TRUE(Contains(prompt, "no host code"));
  EXPECT_TRUE(Contains(prompt, "```opencl"));
  EXPECT_EQ(prompt.find("extern \"C\""), std::string::npos) << "the C++ contract leaked into the OpenCL prompt";
}

TEST(TaskPrompt, OpenclShowsTheKernelArgumentsTheDeviceAndItsBound) {
  const Task task = LoadTask("softmax");
  const std::string prompt = BuildTaskPrompt({task, "opencl", PoclFacts()}, "");
  EXPECT_TRUE(Contains(prompt, "```opencl\n__kernel void softmax(__global const float* x, __global float* y, long rows, "
                               "long cols);\n```"));
  EXPECT_TRUE(Contains(prompt, "Every kernel you launch takes these arguments in this order"));
  EXPECT_TRUE(Contains(prompt, task.baselines.at("opencl").description));
  EXPECT_TRUE(Contains(prompt, "## The device\n- OpenCL device: pthread-skylake-avx512-AMD EPYC (Portable Computing "
                               "Language, OpenCL 3.0 PoCL), a CPU"));
  EXPECT_TRUE(Contains(prompt, "- At most 4096 work-items per work-group; 512 KiB of local memory"));
  EXPECT_TRUE(Contains(prompt, "memory bandwidth 77.0 GB/s"));
  EXPECT_TRUE(Contains(prompt, "so it is memory-bound"));
  // A GPU device has no measured peaks here: no bound is claimed.
  nlohmann::json gpu = PoclFacts();
  gpu["type"] = "gpu";
  EXPECT_EQ(BuildTaskPrompt({task, "opencl", gpu}, "").find("-bound"), std::string::npos);
}

TEST(TaskPrompt, UnmeasuredDeviceSaysSoAndStillRenders) {
  const Task task = LoadTask("relu");
  const std::string prompt = BuildTaskPrompt({task, "cpu", nullptr}, "");
  EXPECT_TRUE(Contains(prompt, "- Not measured"));
  EXPECT_EQ(prompt.find("-bound"), std::string::npos);
}

TEST(TaskPrompt, ShowsTheStartingPointInAFencedBlock) {
  const Task task = LoadTask("vector_add");
  const std::string seed = "// @tune BLOCK: 64, 128\n#include <cstdint>\nextern \"C\" void vector_add() {}\n\n";
  const std::string prompt = BuildTaskPrompt({task, "cpu", CpuFacts()}, seed);
  EXPECT_TRUE(
      Contains(prompt, "## Starting point\nA correct kernel to improve on:\n```cpp\n// @tune BLOCK: 64, 128\n"));
  EXPECT_TRUE(Contains(prompt, "vector_add() {}\n```\n"));
}

}  // namespace
}  // namespace ksmith
