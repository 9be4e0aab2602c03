// Facts about this machine that verdicts depend on: caches (for cold timing), and measured
// memory bandwidth and FLOP rate (for the physical-limit check and the roofline fraction).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/cpu/compiler.h"
#include "core/result.h"

namespace ksmith {

struct MachineFacts {
  std::string hostname;
  std::string cpu_model;
  int cores = 1;
  uint64_t l1d_bytes = 0;
  uint64_t l2_bytes = 0;
  uint64_t llc_bytes = 0;  // last-level cache
  std::string compiler;
  double memory_bandwidth_gbs = 0;  // [GB/s] best of copy, triad and a read-only stream, all cores
  double fp32_gflops = 0;           // [GFLOP/s] FMA throughput, all cores
  std::string measured_at;          // ISO 8601
  bool from_cache = false;

  nlohmann::json ToJson() const;
  static MachineFacts FromJson(const nlohmann::json& json);
};

/// Reads /proc/cpuinfo and the cache sizes; measures nothing.
MachineFacts ProbeMachine();

/// The measured facts, from the cache when present (keyed by CPU, core count and compiler),
/// else measured now (about a second) and cached. `refresh` forces a new measurement.
/// Where LoadMachineFacts keeps the measurements of a machine like `facts` (its model, cores,
/// compiler and cache size, and the probe's version).
std::filesystem::path MachineFactsCachePath(const std::filesystem::path& cache_directory, const MachineFacts& facts);

/// The memory bandwidth measured again, now, as LoadMachineFacts measures it [GB/s]: for a
/// second look before a time is called impossible.
Result<double> MeasureBandwidthNow(const CpuCompiler& compiler, uint64_t llc_bytes);

Result<MachineFacts> LoadMachineFacts(const CpuCompiler& compiler,
                                      const std::filesystem::path& cache_directory, bool refresh);

}  // namespace ksmith
