// The NVRTC form of the CUDA candidate contract (docs/design.md, "The candidate contract").
//
// nvcc costs 1.4-2.5 s for the smallest kernel (cudafe++, cicc, the host compiler over the CUDA
// runtime's headers, twice); NVRTC compiles the same device code in tens of milliseconds. NVRTC
// takes device code only, so a candidate in this form says which part is which:
//
//   #include <ksmith/launch.h>
//   #ifdef KSMITH_DEVICE            // compiled by NVRTC
//   template <int BLOCK> __global__ void add(const float* a, const float* b, float* c, int64_t n) {...}
//   #endif
//   #ifdef KSMITH_HOST              // compiled by the host compiler
//   extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
//     KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, add<256>)(a, b, c, n);
//   }
//   #endif
//
// Everything outside the two sections is seen by both. A launch names its kernel as an
// expression (templates included); the build finds every such expression in the source and asks
// NVRTC for its mangled name, and the CUDA worker, not the candidate, loads the cubin and launches
// through it (cuda_worker/nvrtc_module.h), checking each launch's arguments against the kernel's
// parameters. Kernels in the old form (`<<<...>>>` in one .cu file) still build with nvcc.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// The header a candidate includes to choose this form.
inline constexpr std::string_view kNvrtcFormHeader = "ksmith/launch.h";

/// The symbol an NVRTC-form library exports beside ksmith_entry: `const KsmithModule*
/// ksmith_module(void)`, its cubin, its kernels and the slot the worker binds its launcher to
/// (the layout is kModuleLayout in nvrtc_form.cc and NvrtcModuleView in cuda_worker).
inline constexpr const char* kNvrtcModuleSymbol = "ksmith_module";
inline constexpr unsigned kNvrtcModuleVersion = 1;

/// Whether `source` is in the NVRTC form: it includes <ksmith/launch.h> (outside comments).
bool IsNvrtcForm(std::string_view source);

/// The kernel expressions of the source's launches (the last argument of each KSMITH_LAUNCH, as
/// the preprocessor stringizes it: comments out, whitespace runs as one space), in order, each
/// once. kInvalidArgument, naming the line, for a launch whose parentheses do not close or that
/// names no kernel.
Result<std::vector<std::string>> LaunchedKernels(std::string_view source);

/// The headers the build provides, by path relative to an include folder: ksmith/launch.h (both
/// compilers) and, for NVRTC only, stand-ins for the C and C++ headers it lacks (cstdint,
/// stdint.h, cstddef, cfloat, climits, cmath, math.h) and an empty cuda_runtime.h, so that
/// includes written above both sections work in both.
const std::map<std::string, std::string>& NvrtcHostHeaders();
const std::map<std::string, std::string>& NvrtcDeviceHeaders();

/// The host translation unit: the candidate (included with KSMITH_HOST), the task's expected
/// signature and ksmith_entry, and the launcher the worker binds (ksmith_module). `kernel_path`
/// is where the candidate is written; `data_symbols` name the cubin and kernel table that the
/// assembler file defines.
std::string NvrtcHostWrapper(const Task& task, const std::string& kernel_path);

/// The assembler file that carries the cubin (by .incbin of `cubin_path`) and the table of
/// kernels, one "expression\tmangled name\n" line each.
std::string NvrtcDataAssembly(const std::string& cubin_path,
                              const std::vector<std::pair<std::string, std::string>>& kernels);

}  // namespace ksmith
