// The CPU backend's words to a model (BackendPrompt): its contract's rules and the machine's facts.
#include "backends/cpu/cpu_prompt.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/strings.h"
#include "eval/prompt_text.h"

namespace ksmith {
namespace {

std::string MachineFactsText(const nlohmann::json& facts) {
  std::string text;
  const std::string model = FactText(facts, "cpu_model");
  const int cores = static_cast<int>(FactNumber(facts, "cores"));
  text += "- CPU: " + (model.empty() ? std::string("unknown model") : model);
  if (cores > 0) text += fmt::format(", {} core{} (OpenMP may use all of them)", cores, cores == 1 ? "" : "s");
  text += "\n";
  std::vector<std::string> caches;
  if (const double l1 = FactNumber(facts, "l1d_bytes"); l1 > 0) caches.push_back("L1d " + FormatBytes(l1) + " per core");
  if (const double l2 = FactNumber(facts, "l2_bytes"); l2 > 0) caches.push_back("L2 " + FormatBytes(l2));
  if (const double llc = FactNumber(facts, "llc_bytes"); llc > 0) caches.push_back("last level " + FormatBytes(llc));
  if (!caches.empty()) text += fmt::format("- Caches: {}\n", fmt::join(caches, ", "));
  const double bandwidth = FactNumber(facts, "memory_bandwidth_gbs");
  const double gflops = FactNumber(facts, "fp32_gflops");
  if (bandwidth > 0 && gflops > 0) {
    text += fmt::format(
        "- Measured peaks (all cores): memory bandwidth {} GB/s, FP32 {} GFLOP/s (FMA); balance {} flops per byte\n",
        Rate(bandwidth), Rate(gflops), Rate(gflops / bandwidth));
  }
  if (const std::string compiler = FactText(facts, "compiler"); !compiler.empty()) {
    text += fmt::format("- Compiler: {}\n", FirstLine(compiler, 80));
  }
  return text;
}

}  // namespace

BackendPrompt CpuPrompt() {
  BackendPrompt prompt;
  prompt.kernel_kind = "CPU (C++)";
  prompt.device_noun = "machine";
  prompt.rules =
      "- One C++20 source file, compiled with g++ -O3 -march=native -fopenmp for this machine, that defines the "
         "given function with extern \"C\" linkage and exactly the given parameter types. Define any helpers, "
         "templates and constants you need; include only standard and system headers with <...>.\n"
         "- Parallelism only through OpenMP (`#pragma omp ...`): no std::thread, pthreads or other threads. SIMD "
         "intrinsics (<immintrin.h>) are fine; inline assembly is not.\n"
         "- The results are complete when the function returns, and nothing keeps running afterwards.\n";
  prompt.half_types =
      "fp16 is GCC's `_Float16`; bf16 arrives as its raw 16 bits in a `uint16_t` (the upper half of an IEEE fp32: "
      "widen with `bits << 16`, round to nearest even when narrowing). ";
  prompt.declaration = [](const Task& task) { return task.signature.Declaration(); };
  prompt.device_facts = MachineFactsText;
  prompt.peak_rates = [](const nlohmann::json& facts) {
    return std::pair{FactNumber(facts, "fp32_gflops") * 1e9, FactNumber(facts, "memory_bandwidth_gbs") * 1e9};
  };
  prompt.timed_shape = [](const Task& task) { return task.bench_shape; };
  return prompt;
}

}  // namespace ksmith
