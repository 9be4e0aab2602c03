// What a judged kernel does, as the search's archive (agent/elite_archive.h) keys it: read from
// its verdict (the build's machine code and resources, the timing's roofline position), never
// from how its source looks. A search keyed on code length and text diff, with no such facts,
// ended slower than its baseline (research/anchors_2026-11-28.md, section 3).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/verdict.h"

namespace ksmith {

struct KernelFeatures {
  std::string bound_by;            // "memory" or "compute": the task's physical limit at the bench shape
  int limit_quarter = -1;          // the roofline fraction's quarter: 0 (<25%) .. 3 (>=75%); -1 untimed
  int vector_bits = -1;            // cpu: widest packed arithmetic, 0 when scalar; -1 unknown
  int load_bits = -1;              // cuda: widest loads per thread in the SASS (32, 64, 128); -1 unknown
  std::optional<bool> threads;     // cpu: has an OpenMP parallel region (whose if clause may still keep it serial)
  std::optional<bool> fp64;        // cpu: packed double-precision arithmetic
  std::optional<bool> shared_memory;  // cuda: static __shared__ in any kernel (dynamic is a launch parameter)
  std::optional<bool> tensor_cores;   // cuda: *MMA instructions in the SASS
  int registers_band = -1;         // cuda: the most registers per thread of its kernels: 32, 64, 128, 255
                                   // (what limits occupancy first in most kernels)

  /// The archive's cell: the features joined, "memory/v256/omp/fp32" (not the quarter of the limit: that is speed, which decides within a cell).
  std::string Cell() const;
  /// For people and prompts: "memory-bound at 50-75% of the limit, 256-bit vector arithmetic, ...".
  std::string Describe() const;
  nlohmann::json ToJson() const;
};

/// The features a verdict shows; fields the verdict lacks stay unknown (an untimed pass has no
/// roofline quarter, a CPU verdict no tensor cores).
KernelFeatures FeaturesOf(const Verdict& verdict);

}  // namespace ksmith
