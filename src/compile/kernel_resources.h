// What a compiler says about each kernel it built: its resources (registers, shared memory,
// spills) and the instruction counts of its machine code. Recorded in a build's facts
// (compile/build.h) whatever backend compiled it; backends/cuda/cuda_resources.h reads them from
// the CUDA toolchain's output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

/// One function as ptxas compiled it for one architecture.
struct KernelResources {
  std::string name;          // demangled ("void tile<64>(float const*, float*)"), else as mangled
  std::string mangled_name;  // as ptxas printed it
  std::string arch;          // "sm_90a"
  bool is_kernel = true;     // false: a device function that was not inlined (listed only when it
                             // has a stack frame or spills, the only reason to show one)
  int registers = 0;         // per thread
  int barriers = 0;          // named barriers used
  int64_t shared_memory_bytes = 0;     // static __shared__ only: dynamic shared memory is a launch
                                       // parameter ptxas never sees
  int64_t stack_frame_bytes = 0;       // per thread, in local memory
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t constant_memory_bytes = 0;   // sum of the cmem[N] banks ptxas lists (nvcc 13 lists none
                                       // for sm_90 and later)
  int64_t cumulative_stack_bytes = 0;  // with the stacks of the functions it calls

  nlohmann::json ToJson() const;
  /// Reads ToJson's form; a missing or mistyped key keeps its default.
  static KernelResources FromJson(const nlohmann::json& json);
};

nlohmann::json ToJson(const std::vector<KernelResources>& resources);

/// Instruction counts over some SASS. "Wide" loads move 64 bits or more per thread: what a
/// vectorized (float2/float4) kernel issues.
struct SassCounts {
  int64_t instructions = 0;   // every instruction except NOP (cuobjdump pads functions with NOPs)
  int64_t tensor_core = 0;    // *MMA: HMMA, HGMMA, IMMA, IGMMA, QGMMA, DMMA, QMMA, OMMA, UTC*MMA...
  int64_t warpgroup = 0;      // WARPGROUP.ARRIVE / .DEPBAR: the fences around Hopper's wgmma
  int64_t tma = 0;            // UTMALDG, UTMASTG, UTMAPF, UBLKCP...: tensor memory accelerator
  int64_t fma = 0;            // FFMA, FFMA2, DFMA, HFMA2 (not HFMA2.MMA's register-zeroing idiom)
  int64_t loads = 0;          // LDG, LDS, LD of any width
  int64_t wide_loads = 0;     // of those, 64 bits or more
  int64_t loads_128_bit = 0;  // of those, 128 bits or more
  int64_t local_loads = 0;    // LDL: spills or stack arrays
  int64_t local_stores = 0;   // STL
  std::map<std::string, int64_t> tensor_opcodes;  // full opcode: "HGMMA.64x128x16.F32.BF16"

  void Add(const SassCounts& other);
  nlohmann::json ToJson() const;
  static SassCounts FromJson(const nlohmann::json& json);
};

struct KernelSass {
  std::string name;          // demangled when possible
  std::string mangled_name;  // as cuobjdump printed it
  std::string arch;          // "sm_90a"
  SassCounts counts;

  nlohmann::json ToJson() const;
  static KernelSass FromJson(const nlohmann::json& json);
};

struct SassSummary {
  SassCounts total;
  std::vector<KernelSass> kernels;
  std::string error;  // why there is no summary (no cuobjdump, or it failed); empty when read

  nlohmann::json ToJson() const;
  static SassSummary FromJson(const nlohmann::json& json);
};

}  // namespace ksmith
