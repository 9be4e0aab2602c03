// The CUDA backend's words to a model (BackendPrompt): the NVRTC form's rules and the GPU's facts.
#include "backends/cuda/cuda_prompt.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/prompt_text.h"

namespace ksmith {
namespace {

std::string GpuFactsText(const nlohmann::json& facts) {
  std::string text;
  const std::string capability = FactText(facts, "compute_capability");
  std::string arch;
  for (char c : capability) {
    if (c != '.') arch += c;
  }
  text += fmt::format("- GPU: {}", FactText(facts, "name").empty() ? "unknown model" : FactText(facts, "name"));
  if (!capability.empty()) text += fmt::format(", compute capability {} (sm_{})", capability, arch);
  if (const double sms = FactNumber(facts, "sm_count"); sms > 0) text += fmt::format(", {:.0f} SMs", sms);
  if (const double mhz = FactNumber(facts, "sm_clock_max_mhz"); mhz > 0) text += fmt::format(" at up to {:.0f} MHz", mhz);
  if (const double memory = FactNumber(facts, "memory_bytes"); memory > 0) text += ", " + FormatBytes(memory) + " memory";
  text += "\n";
  if (const double l2 = FactNumber(facts, "l2_bytes"); l2 > 0) text += "- L2 cache: " + FormatBytes(l2) + "\n";
  const double block_default = FactNumber(facts, "shared_memory_per_block_default_bytes");
  const double block_max = FactNumber(facts, "shared_memory_per_block_bytes");
  const double per_sm = FactNumber(facts, "shared_memory_per_sm_bytes");
  if (block_max > 0) {
    text += fmt::format("- Shared memory: {} per block by default",
                        FormatBytes(block_default > 0 ? block_default : block_max));
    if (block_max > block_default && block_default > 0) {
      text += fmt::format(
          ", up to {} per block after cudaFuncSetAttribute(kernel, "
          "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)",
          FormatBytes(block_max));
    }
    if (per_sm > 0) text += fmt::format(", {} per SM", FormatBytes(per_sm));
    text += "\n";
  }
  const double registers = FactNumber(facts, "registers_per_sm");
  const double threads = FactNumber(facts, "max_threads_per_sm");
  if (registers > 0) {
    text += fmt::format("- Registers: {:.0f} 32-bit registers per SM (at most 255 per thread)", registers);
    if (threads > 0) text += fmt::format("; up to {:.0f} resident threads per SM", threads);
    text += "\n";
  }
  const double bandwidth = FactNumber(facts, "copy_bandwidth_gbps");
  const double tflops = FactNumber(facts, "fp32_tflops");
  if (bandwidth > 0 || tflops > 0) {
    std::vector<std::string> peaks;
    if (bandwidth > 0) {
      std::string peak = fmt::format("memory bandwidth {} GB/s (device-to-device copy", Rate(bandwidth));
      if (const double theory = FactNumber(facts, "theoretical_bandwidth_gbps"); theory > 0) {
        peak += fmt::format("; {} GB/s on paper", Rate(theory));
      }
      peaks.push_back(peak + ")");
    }
    if (tflops > 0) peaks.push_back(fmt::format("FP32 {} TFLOP/s (FFMA, no tensor cores)", Rate(tflops)));
    if (bandwidth > 0 && tflops > 0)
      peaks.push_back(fmt::format("balance {} flops per byte", Rate(1000 * tflops / bandwidth)));
    text += fmt::format("- Measured peaks: {}\n", fmt::join(peaks, ", "));
  }
  return text;
}

}  // namespace

BackendPrompt CudaPrompt() {
  BackendPrompt prompt;
  prompt.kernel_kind = "CUDA";
  prompt.device_noun = "GPU";
  prompt.rules =
      "- One CUDA C++ source file for this GPU that defines the given host function with extern \"C\" linkage "
           "and exactly the given parameter types, including the trailing `cudaStream_t stream`. Define any kernels, "
           "device functions, templates and constants you need; include only system and CUDA headers with <...>.\n"
           "- Write it in the NVRTC form, which builds in a fraction of a second (nvcc takes seconds): "
           "`#include <ksmith/launch.h>`; device code (kernels, __device__ functions, templates) inside "
           "`#ifdef KSMITH_DEVICE` ... `#endif`, compiled by NVRTC (CUDA headers such as <cuda_fp16.h>, "
           "<cuda_bf16.h>, <cooperative_groups.h> and <cuda/std/...> work there; <cstdint>, <cfloat>, <climits> "
           "and <cmath> give their types and macros, not the rest of the C++ library); the host function inside "
           "`#ifdef KSMITH_HOST` ... `#endif`, compiled by g++, which launches each kernel with "
           "`KSMITH_LAUNCH(grid, block, shared_bytes, stream, kernel)(arguments...)` in place of "
           "`kernel<<<grid, block, shared_bytes, stream>>>(arguments...)`. `kernel` may be a template instance "
           "written out (`tile_kernel<128, 8>`, not a host template's own parameter); pass each argument with its "
           "parameter's exact type (an int64_t parameter takes an int64_t); dynamic shared memory above 48 KiB is "
           "granted as the launch asks. Code outside both "
           "sections (constants, structs) is seen by both; the kernel expression is compiled as device code, so a "
           "constant in it must be declared outside both sections. Headers only the host needs (<algorithm>, "
           "<vector>, <cstdio>, and <cuda_runtime.h> for dim3 or runtime calls) go inside KSMITH_HOST. Host code "
           "cannot otherwise name a kernel or a device variable (no cudaOccupancy*, cudaMemcpyToSymbol or "
           "cooperative launches). A plain .cu file with `<<<...>>>` launches, built by nvcc, is accepted too.\n"
           "- The pointers are device pointers. Enqueue all GPU work on `stream` (KSMITH_LAUNCH(..., stream, ...), "
           "`cudaMemcpyAsync(..., stream)`, `cudaMallocAsync(..., stream)`): the results "
           "must be complete when the work on `stream` completes. No other streams (nor the legacy default stream), "
           "no host threads, and no work still running after `stream` completes.\n"
           "- The CUDA runtime API only: no driver API (cu* functions), no cudaSetDevice or cudaDeviceReset, no "
           "profiler or NVML calls, no loading code at run time.\n"
           "- Check that your launch configuration is valid for every size.\n"
           "An NVRTC-form file has this shape:\n"
           "```cuda\n"
           "#include <ksmith/launch.h>\n\n"
           "#ifdef KSMITH_DEVICE\n"
           "template <int BLOCK>\n"
           "__global__ void scale_kernel(const float* x, float* y, int64_t n) {\n"
           "  const int64_t i = static_cast<int64_t>(blockIdx.x) * BLOCK + threadIdx.x;\n"
           "  if (i < n) y[i] = 2.0f * x[i];\n"
           "}\n"
           "#endif\n\n"
           "#ifdef KSMITH_HOST\n"
           "extern \"C\" void scale(const float* x, float* y, int64_t n, cudaStream_t stream) {\n"
           "  if (n <= 0) return;\n"
           "  KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, scale_kernel<256>)(x, y, n);\n"
           "}\n"
           "#endif\n"
           "```\n";
  prompt.declaration_note = "Its pointers are device pointers; `stream` is where all its work must go.\n";
  prompt.half_types = "fp16 is `__half` (cuda_fp16.h) and bf16 is `__nv_bfloat16` (cuda_bf16.h). ";
  prompt.parallel_units = "SMs";
  prompt.tile_memory = "shared-memory";
  prompt.declaration = [](const Task& task) { return task.CudaDeclaration(); };
  prompt.device_facts = GpuFactsText;
  prompt.peak_rates = [](const nlohmann::json& facts) {
    return std::pair{FactNumber(facts, "fp32_tflops") * 1e12, FactNumber(facts, "copy_bandwidth_gbps") * 1e9};
  };
  prompt.timed_shape = [](const Task& task) { return task.cuda ? task.cuda->bench_shape : task.bench_shape; };
  return prompt;
}

}  // namespace ksmith
