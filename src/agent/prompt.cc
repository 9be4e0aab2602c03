#include "agent/prompt.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/model_format.h"
#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// GPU kernels get the GPU's facts, shapes and contract; the only GPU backend today is CUDA.
bool IsCuda(const PromptContext& context) { return TraitsOf(context.backend).gpu; }

// The code fence's tag, also the one ExtractKernel accepts.
std::string FenceTag(const PromptContext& context) { return TraitsOf(context.backend).fence_language; }

// "48 KiB", "1.5 MiB", "80 GiB".
std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) value /= 1024, ++unit;
  const bool whole = value >= 10 || value == std::floor(value);
  return fmt::format("{:.{}f} {}", value, whole ? 0 : 1, kUnits[unit]);
}

// Plain numbers a reader takes in at a glance, no exponents: 3270, 51.0, 6.34.
std::string Rate(double value) {
  if (value >= 100) return fmt::format("{:.0f}", value);
  if (value >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

double Number(const nlohmann::json& facts, const char* key) {
  const auto found = facts.is_object() ? facts.find(key) : facts.end();
  return found != facts.end() && found->is_number() ? found->get<double>() : 0.0;
}

std::string Text(const nlohmann::json& facts, const char* key) {
  const auto found = facts.is_object() ? facts.find(key) : facts.end();
  return found != facts.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::string CpuFacts(const nlohmann::json& facts) {
  std::string text;
  const std::string model = Text(facts, "cpu_model");
  const int cores = static_cast<int>(Number(facts, "cores"));
  text += "- CPU: " + (model.empty() ? std::string("unknown model") : model);
  if (cores > 0) text += fmt::format(", {} core{} (OpenMP may use all of them)", cores, cores == 1 ? "" : "s");
  text += "\n";
  std::vector<std::string> caches;
  if (const double l1 = Number(facts, "l1d_bytes"); l1 > 0) caches.push_back("L1d " + FormatBytes(l1) + " per core");
  if (const double l2 = Number(facts, "l2_bytes"); l2 > 0) caches.push_back("L2 " + FormatBytes(l2));
  if (const double llc = Number(facts, "llc_bytes"); llc > 0) caches.push_back("last level " + FormatBytes(llc));
  if (!caches.empty()) text += fmt::format("- Caches: {}\n", fmt::join(caches, ", "));
  const double bandwidth = Number(facts, "memory_bandwidth_gbs");
  const double gflops = Number(facts, "fp32_gflops");
  if (bandwidth > 0 && gflops > 0) {
    text += fmt::format(
        "- Measured peaks (all cores): memory bandwidth {} GB/s, FP32 {} GFLOP/s (FMA); balance {} flops per byte\n",
        Rate(bandwidth), Rate(gflops), Rate(gflops / bandwidth));
  }
  if (const std::string compiler = Text(facts, "compiler"); !compiler.empty()) {
    text += fmt::format("- Compiler: {}\n", FirstLine(compiler, 80));
  }
  return text;
}

std::string GpuFactsText(const nlohmann::json& facts) {
  std::string text;
  const std::string capability = Text(facts, "compute_capability");
  std::string arch;
  for (char c : capability) {
    if (c != '.') arch += c;
  }
  text += fmt::format("- GPU: {}", Text(facts, "name").empty() ? "unknown model" : Text(facts, "name"));
  if (!capability.empty()) text += fmt::format(", compute capability {} (sm_{})", capability, arch);
  if (const double sms = Number(facts, "sm_count"); sms > 0) text += fmt::format(", {:.0f} SMs", sms);
  if (const double mhz = Number(facts, "sm_clock_max_mhz"); mhz > 0) text += fmt::format(" at up to {:.0f} MHz", mhz);
  if (const double memory = Number(facts, "memory_bytes"); memory > 0) text += ", " + FormatBytes(memory) + " memory";
  text += "\n";
  if (const double l2 = Number(facts, "l2_bytes"); l2 > 0) text += "- L2 cache: " + FormatBytes(l2) + "\n";
  const double block_default = Number(facts, "shared_memory_per_block_default_bytes");
  const double block_max = Number(facts, "shared_memory_per_block_bytes");
  const double per_sm = Number(facts, "shared_memory_per_sm_bytes");
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
  const double registers = Number(facts, "registers_per_sm");
  const double threads = Number(facts, "max_threads_per_sm");
  if (registers > 0) {
    text += fmt::format("- Registers: {:.0f} 32-bit registers per SM (at most 255 per thread)", registers);
    if (threads > 0) text += fmt::format("; up to {:.0f} resident threads per SM", threads);
    text += "\n";
  }
  const double bandwidth = Number(facts, "copy_bandwidth_gbps");
  const double tflops = Number(facts, "fp32_tflops");
  if (bandwidth > 0 || tflops > 0) {
    std::vector<std::string> peaks;
    if (bandwidth > 0) {
      std::string peak = fmt::format("memory bandwidth {} GB/s (device-to-device copy", Rate(bandwidth));
      if (const double theory = Number(facts, "theoretical_bandwidth_gbps"); theory > 0) {
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

// The device's peak rates in flops per second and bytes per second, 0 when not measured.
std::pair<double, double> PeakRates(const nlohmann::json& facts, bool cuda) {
  if (!facts.is_object()) return {0, 0};
  if (cuda) return {Number(facts, "fp32_tflops") * 1e12, Number(facts, "copy_bandwidth_gbps") * 1e9};
  return {Number(facts, "fp32_gflops") * 1e9, Number(facts, "memory_bandwidth_gbs") * 1e9};
}

std::string_view WithoutTrailingSpace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
  return text;
}

std::string SystemRules(const PromptContext& context) {
  if (IsCuda(context)) {
    return "- One CUDA C++ source file for this GPU that defines the given host function with extern \"C\" linkage "
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
  }
  return "- One C++20 source file, compiled with g++ -O3 -march=native -fopenmp for this machine, that defines the "
         "given function with extern \"C\" linkage and exactly the given parameter types. Define any helpers, "
         "templates and constants you need; include only standard and system headers with <...>.\n"
         "- Parallelism only through OpenMP (`#pragma omp ...`): no std::thread, pthreads or other threads. SIMD "
         "intrinsics (<immintrin.h>) are fine; inline assembly is not.\n"
         "- The results are complete when the function returns, and nothing keeps running afterwards.\n";
}

}  // namespace

std::string DescribeDistribution(std::string_view name) {
  if (name == "normal") return "normal: standard normal values";
  if (name == "uniform") return "uniform: uniform in (-1, 1)";
  if (name == "large") return "large: normal values scaled by 1000 (|x| up to several thousand)";
  if (name == "positive") return "positive: uniform in (0, 1)";
  if (name == "ties") return "ties: small integers from -4 to 4 (many equal values)";
  return std::string(name);
}

const DimValues& TimedShape(const PromptContext& context) {
  return IsCuda(context) && context.task.cuda ? context.task.cuda->bench_shape : context.task.bench_shape;
}

std::string RenderDeviceFacts(const nlohmann::json& facts, std::string_view backend) {
  if (!facts.is_object() || facts.empty()) return "- Not measured: plan for a typical modern machine.\n";
  return TraitsOf(std::string(backend)).gpu ? GpuFactsText(facts) : CpuFacts(facts);
}

std::string BuildSystemPrompt(const PromptContext& context) {
  return ModelFormatOf(context.format).SystemPrompt(context);
}

std::string BuildTaskPrompt(const PromptContext& context, std::string_view starting_point) {
  std::string text = ModelFormatOf(context.format).TaskPrompt(context, starting_point);
  if (!context.knowledge.empty()) text += "\n\n" + context.knowledge;
  return text;
}

std::string BuildNativeSystemPrompt(const PromptContext& context) {
  const bool cuda = IsCuda(context);
  std::string text = fmt::format(
      "You are an expert performance engineer who writes fast, correct {} kernels.\n"
      "Each task gives you a function to implement, the exact declaration to define and the {} it runs "
      "on. ksmith, an automated evaluator, compiles your answer, verifies it against a double-precision "
      "reference on hidden shapes and inputs, and times it against a baseline. Its verdict comes back as "
      "the next message, and you then improve the kernel. A fast kernel that is wrong on any input is "
      "worth nothing; a correct kernel that is slower than the baseline is a start.\n\n",
      cuda ? "CUDA" : "CPU (C++)", cuda ? "GPU" : "machine");
  text += "Rules for the source file (breaking one fails the attempt):\n";
  text += SystemRules(context);
  text +=
      "- Correct for every shape: the hidden shapes go from a single element to large sizes, including sizes that "
      "are not multiples of 8, 32 or 128. Do not assume or hard-code sizes, and handle the remainder of every "
      "blocked or vectorized loop.\n"
      "- Write every element of every output on every call. Never write to the inputs, and never read or write "
      "outside the given arrays.\n"
      "- Compute honestly: at least the precision of the tensors' dtype (fp32), with no lower-precision arithmetic "
      "(fp16, bf16, TF32) or approximation whose error exceeds the task's tolerance. Compute from the inputs on "
      "every call: no caching of results between calls, no behaviour that depends on how many times you are called.\n"
      "- No files, network, processes, environment variables, signals, clocks or timers; no exit or abort; no "
      "dynamic loading or raw system calls; no library that implements the operation (BLAS, cuBLAS, cuDNN, CUTLASS, "
      "Thrust and the like) unless the task allows it.\n\n";
  text += fmt::format(
      "How to answer:\n"
      "1. First a short explanation, a few sentences: the approach and why it is fast on this {}; after a "
      "verdict, what you change and why.\n"
      "2. Then exactly one fenced code block, ```{}, holding the complete source file that defines the "
      "function. Do not split the code over several blocks, do not add a main() or tests, and write "
      "nothing after the block.\n"
      "Optionally, declare tunable constants so that a search can try their values: a line "
      "`// @tune BLOCK: 64, 128, 256` followed by `#ifndef BLOCK` / `#define BLOCK 128` / `#endif`.\n",
      cuda ? "GPU" : "machine", FenceTag(context));
  return text;
}

std::string BuildNativeTaskPrompt(const PromptContext& context, std::string_view starting_point) {
  const Task& task = context.task;
  const bool cuda = IsCuda(context);
  std::string text = fmt::format("# Task: {} ({}, level {}, backend {})\n\n{}\n", task.name, task.category, task.level,
                                 context.backend, Trim(task.description));
  if (!Trim(task.pytorch).empty()) {
    text += fmt::format("\nThe same function in PyTorch:\n```python\n{}\n```\n", Trim(task.pytorch));
  }
  text += fmt::format("\n## Define exactly this function\n```{}\n{};\n```\n", FenceTag(context),
                      cuda ? task.CudaDeclaration() : task.signature.Declaration());
  if (cuda) text += "Its pointers are device pointers; `stream` is where all its work must go.\n";

  text += "\n## Tensors (contiguous, row-major)\n";
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) {
      text += fmt::format("- {} ({}): {} [{}]\n", tensor.name, list == &task.inputs ? "input, read-only" : "output",
                          DTypeName(tensor.dtype), fmt::join(tensor.shape, ", "));
    }
  }
  text += fmt::format("Sizes are int64_t parameters: {}.\n", fmt::join(task.dims, ", "));
  std::set<DType> types;
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) types.insert(tensor.dtype);
  }
  if (types.contains(DType::kFloat16) || types.contains(DType::kBFloat16)) {
    text += cuda ? "fp16 is `__half` (cuda_fp16.h) and bf16 is `__nv_bfloat16` (cuda_bf16.h). "
                 : "fp16 is GCC's `_Float16`; bf16 arrives as its raw 16 bits in a `uint16_t` (the upper half of "
                   "an IEEE fp32: widen with `bits << 16`, round to nearest even when narrowing). ";
    text += "Accumulate in fp32: outputs are held to fp32 accumulation plus one rounding to their type.\n";
  }

  text += "\n## Shapes and inputs\n";
  std::vector<std::string> dev_shapes;
  for (const auto& shape : task.dev_shapes) dev_shapes.push_back(task.FormatShape(shape));
  if (!dev_shapes.empty()) text += fmt::format("Examples to reason with: {}.\n", fmt::join(dev_shapes, "; "));
  // The order of magnitude only: the exact timed and verified shapes stay hidden, so a kernel
  // cannot be tuned to (or special-case) them.
  const DimValues& timed = TimedShape(context);
  const bool timed_known = timed.size() == task.dims.size();
  int64_t timed_elements = 0;
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) {
      if (timed_known) timed_elements = std::max(timed_elements, task.Elements(tensor, timed));
    }
  }
  text +=
      "Verification uses hidden shapes, from a single element to large sizes, including sizes that are "
      "not multiples of 8, 32 or 128, with several seeds";
  if (timed_elements > 0) {
    text += fmt::format("; the timed shape is large (its biggest tensor holds on the order of 10^{} elements)",
                        static_cast<int>(std::floor(std::log10(static_cast<double>(timed_elements)))));
  }
  text += ".\nInput distributions:\n";
  for (const Distribution distribution : task.distributions) {
    text += "- " + DescribeDistribution(DistributionName(distribution)) + "\n";
  }
  std::set<DType> output_types;
  for (const auto& tensor : task.outputs) output_types.insert(tensor.dtype);
  for (const DType dtype : output_types) {
    if (!IsFloatingPoint(dtype)) {
      text += fmt::format("Outputs of type {} are indices and must match the reference exactly.\n", DTypeName(dtype));
      continue;
    }
    const Tolerance tolerance = task.ToleranceFor(dtype);
    text += fmt::format(
        "Tolerance ({}): against the double-precision reference, a norm-wise relative error "
        "||out - ref|| / ||ref|| within about {:.2g} and each element within {:.2g} x (|ref| + rms(ref)), "
        "both plus {}. Every output element must be written.\n",
        DTypeName(dtype), tolerance.norm, tolerance.elem,
        task.accumulation_expression == "1"
            ? std::string("a small rounding allowance")
            : fmt::format("a rounding allowance that grows with the accumulation length ({})",
                          task.accumulation_expression));
  }
  text += task.allowed_libraries.empty()
              ? std::string("Libraries: none that implements the operation; write the computation yourself.\n")
              : fmt::format("Libraries you may call: {}.\n", fmt::join(task.allowed_libraries, ", "));

  text += "\n## What you are measured against\n";
  const auto baseline = task.baselines.find(context.backend);
  text += fmt::format(
      "Your kernel is timed against the baseline ({}) on the timed shape, with cold caches, both "
      "interleaved; the speedup (baseline time / your time) comes with a 95% interval, and a difference "
      "inside the noise counts as a tie.\n",
      baseline != task.baselines.end() && !baseline->second.description.empty() ? baseline->second.description
                                                                                : "a plain implementation");
  text +=
      fmt::format("Cost model: {} flops and at least {} bytes moved.", task.flops_expression, task.bytes_expression);
  const auto [peak_flops, peak_bytes] = PeakRates(context.device_facts, cuda);
  const double bytes = timed_known ? static_cast<double>(task.MinimumBytes(timed)) : 0.0;
  if (peak_flops > 0 && peak_bytes > 0 && bytes > 0) {
    // Only which side of the balance point: the intensity itself would give the timed size away.
    const double intensity = static_cast<double>(task.Flops(timed)) / bytes;
    const bool memory_bound = intensity < peak_flops / peak_bytes;
    text += fmt::format(
        " At the timed shape it does {} flops per byte than this {}'s balance point, so it is {}-bound: {}",
        memory_bound ? "fewer" : "more", cuda ? "GPU" : "machine", memory_bound ? "memory" : "compute",
        memory_bound ? "the floor is moving those bytes at the measured bandwidth; read and write each element "
                       "once, contiguously and vectorized, with every core busy.\n"
                     : "the floor is the FP32 rate; reuse data from caches or registers (tiling) and keep the "
                       "FMA units busy.\n");
  } else {
    text += "\n";
  }
  text += fmt::format("\n## The {}\n{}", cuda ? "GPU" : "machine",
                      RenderDeviceFacts(context.device_facts, context.backend));

  if (!Trim(starting_point).empty()) {
    text += fmt::format("\n## Starting point\nA correct kernel to improve on:\n```{}\n{}\n```\n", FenceTag(context),
                        WithoutTrailingSpace(starting_point));
  }
  text += fmt::format("\nWrite the fastest correct kernel you can: a short explanation, then one ```{} block.\n",
                      FenceTag(context));
  return text;
}

}  // namespace ksmith
