// What a CPU kernel's machine code does with vectors, read from its disassembly: the widest SIMD
// registers its floating-point arithmetic uses, single against double precision, and whether it
// starts OpenMP threads. The search's archive keys kernels on these (agent/kernel_features.h):
// they come from what the compiler made of the source, not from how the source looks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct VectorCode {
  int64_t instructions = 0;        // every instruction in the object
  int64_t packed_single = 0;       // packed fp32 arithmetic (add, mul, fma, max, sqrt...: not moves)
  int64_t packed_double = 0;       // packed fp64 arithmetic
  int64_t scalar_float = 0;        // scalar fp32/fp64 arithmetic (addss, vfmadd231sd...)
  int64_t arithmetic_512_bit = 0;  // packed arithmetic on zmm registers
  int64_t arithmetic_256_bit = 0;  // on ymm
  int64_t arithmetic_128_bit = 0;  // on xmm
  int64_t fma = 0;                 // fused multiply-adds, packed or scalar
  int64_t openmp_parallel = 0;     // calls that start an OpenMP team (GOMP_parallel*)

  /// 512, 256 or 128: the widest registers of its packed arithmetic; 0 when it has none (scalar).
  int widest_vector_bits() const;
  nlohmann::json ToJson() const;
  static VectorCode FromJson(const nlohmann::json& json);
};

/// Reads `objdump -d --no-show-raw-insn -M att` output (x86-64). Lines that are not instructions
/// are skipped; another architecture's code gives counts of zero, never an error.
VectorCode SummarizeVectorCode(std::string_view objdump_output);

/// Runs objdump on `shared_object` and summarizes it.
Result<VectorCode> ReadVectorCode(const std::filesystem::path& shared_object);

}  // namespace ksmith
