// What the GPU is and how fast it really goes: the facts that prompts, the roofline and the
// physical-limit check need. Compiled by nvcc into ksmith-cuda-worker only; the evaluator reads
// the JSON these return (backends/cuda/gpu_facts.h) and never links the CUDA runtime itself.
#pragma once

#include <nlohmann/json.hpp>

namespace ksmith {

/// Identity and fixed properties of `device`, read from the runtime without measuring anything
/// (well under a second, most of it CUDA initialization): name, uuid ("GPU-xxxxxxxx-..."),
/// compute capability, SM count, shared memory per block (default and opt-in maximum) and per SM,
/// registers per SM, L2 and persisting-L2 sizes, memory size and bus width, clocks, theoretical
/// DRAM bandwidth, driver and runtime versions, ECC. Returns {"error": "..."} on any CUDA error.
nlohmann::json DescribeGpu(int device);

/// Measured peaks on `device`, each with its own time: device-to-device copy bandwidth
/// ("copy", GB/s counting bytes read plus bytes written), FP32 FMA rate ("fp32_fma", TFLOP/s) and
/// BF16 tensor rate through cuBLAS ("bf16_gemm", TFLOP/s, BF16 in and out, FP32 accumulation).
/// Each reports best and median over several CUDA-event-timed repetitions. Never exits or throws:
/// what could not be measured is missing, and "errors" lists why. Frees everything; about 1-3 s.
nlohmann::json MeasureGpuPeaks(int device);

}  // namespace ksmith
