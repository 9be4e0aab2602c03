// Facts about the GPU that verdicts and prompts depend on: what it is (SMs, shared memory, L2)
// and how fast it really goes (measured copy bandwidth, FP32 and BF16 tensor rates). The CUDA
// work runs in ksmith-cuda-worker (backends/cuda/worker/probe.h); this side only runs it, parses its JSON
// and caches the measurement per GPU, so that ksmith itself never links the CUDA runtime.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct GpuFacts {
  // Fixed properties (`ksmith-cuda-worker --describe`).
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::string uuid;                // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  uint64_t l2_bytes = 0;
  uint64_t persisting_l2_max_bytes = 0;
  /// The opt-in maximum (cudaFuncAttributeMaxDynamicSharedMemorySize); without opting in a block
  /// gets shared_memory_per_block_default_bytes (48 KiB).
  uint64_t shared_memory_per_block_bytes = 0;
  uint64_t shared_memory_per_block_default_bytes = 0;
  uint64_t shared_memory_per_sm_bytes = 0;
  int registers_per_sm = 0;    // 32-bit registers
  int max_threads_per_sm = 0;
  uint64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
  int sm_clock_max_mhz = 0;
  int memory_clock_mhz = 0;
  double theoretical_bandwidth_gbps = 0;  // [GB/s] 2 x memory clock x bus width
  bool ecc_enabled = false;
  std::string driver_version;   // the kernel module's, "580.159.03"; else the CUDA version
  std::string runtime_version;  // "13.0"

  // Measured (`ksmith-cuda-worker --probe`): best of several repetitions, 0 when not measured.
  double copy_bandwidth_gbps = 0;  // [GB/s] device-to-device copy, bytes read + bytes written
  double fp32_tflops = 0;          // [TFLOP/s] FFMA chains on every SM
  double bf16_tensor_tflops = 0;   // [TFLOP/s] cuBLAS BF16 GEMM, FP32 accumulation
  std::vector<std::string> probe_errors;  // why a measurement is missing
  std::string measured_at;                // ISO 8601
  bool from_cache = false;

  /// True when all three peaks were measured.
  bool measured() const;

  nlohmann::json ToJson() const;
  /// Reads ToJson()'s form. Fails with kParse when the JSON is not an object or lacks a uuid.
  static Result<GpuFacts> FromJson(const nlohmann::json& json);
  /// Reads the worker's output: `--probe`'s {"describe": {...}, "peaks": {...}}, or `--describe`'s
  /// object alone. An {"error": ...} from the worker becomes kUnsupported "no CUDA GPU: ...".
  static Result<GpuFacts> FromWorkerJson(const nlohmann::json& json);
};

/// Runs `<worker> --describe` (quick) for the GPU's uuid, then returns the measurement cached in
/// <cache_dir>/gpu-<uuid>.json unless `refresh`; otherwise runs `<worker> --probe` (at most 60 s)
/// and caches it when every peak was measured. The fixed properties always come from the fresh
/// --describe. Errors: kNotFound when the worker was not built, kUnsupported "no CUDA GPU: ..."
/// when the worker finds no GPU or driver, kTimeout or kInternal when the worker misbehaves.
Result<GpuFacts> LoadGpuFacts(const std::filesystem::path& worker_executable,
                              const std::filesystem::path& cache_dir, bool refresh);

/// $KSMITH_CUDA_WORKER when set, else ksmith-cuda-worker beside the running executable.
std::filesystem::path DefaultCudaWorkerExecutable();

}  // namespace ksmith
