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
// NVRTC for its mangled name. The library holds the host code and ksmith's launcher; the cubin
// and the table of its kernels stay beside it in the cache, and the CUDA worker, not the
// candidate, loads them and launches through them (backends/cuda/worker/nvrtc_module.h), checking each
// launch's arguments against the kernel's parameters. Kernels in the old form (`<<<...>>>` in one
// .cu file) still build with nvcc.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// The header a candidate includes to choose this form.
inline constexpr std::string_view kNvrtcFormHeader = "ksmith/launch.h";

/// The data symbol an NVRTC-form library exports beside ksmith_entry: the slot, in ksmith's
/// launcher object, that the CUDA worker fills with its launch function.
inline constexpr const char* kNvrtcLauncherSymbol = "ksmith_launcher";

/// Beside a built library `<digest>.so`: its cubin and its kernel table ("expression\tmangled
/// name\n" lines), which the CUDA worker loads.
inline constexpr std::string_view kNvrtcCubinExtension = ".cubin";
inline constexpr std::string_view kNvrtcKernelsExtension = ".kernels";

/// The cubin of the NVRTC-form library `shared_object`: the regular file (not a link) beside it,
/// with its kernel table, where the library sits in `cache_directory`/cuda-objects, the compiled
/// objects' folder, which only ksmith's builds write (a KernelBench candidate's build sandbox
/// writes elsewhere). Empty for any other library (nvcc's, a KernelBench shim).
std::filesystem::path NvrtcDeviceCodeOf(const std::filesystem::path& shared_object,
                                        const std::filesystem::path& cache_directory);

/// Whether `source` is in the NVRTC form: it includes <ksmith/launch.h> (outside comments).
bool IsNvrtcForm(std::string_view source);

/// The kernel expressions of the source's launches (the last argument of each KSMITH_LAUNCH, as
/// the preprocessor stringizes it: comments out, whitespace runs as one space), in order, each
/// once. kInvalidArgument, naming the line, for a launch whose parentheses do not close or that
/// names no kernel.
Result<std::vector<std::string>> LaunchedKernels(std::string_view source);

/// The kinds of a kernel's parameters from its demangled name ("void K<4>(float const*, long
/// long)" -> "pi"): p pointer, i integer (bool, char, the ints, their unsigned forms), f float or
/// double, o anything else (a struct, float4, __half), where only the size is checked. Empty
/// when the name has no parameter list.
std::string ParameterKinds(const std::string& demangled);

/// The headers the build provides (nvrtc_headers.cc), by path relative to an include folder:
/// ksmith/launch.h (both compilers) and, for NVRTC only, stand-ins for the C and C++ headers it lacks (cstdint,
/// stdint.h, cstddef, cfloat, climits, cmath, math.h) and an empty cuda_runtime.h, so that
/// includes written above both sections work in both.
const std::map<std::string, std::string>& NvrtcHostHeaders();
const std::map<std::string, std::string>& NvrtcDeviceHeaders();

/// The host translation unit: the candidate (included with KSMITH_HOST), the task's expected
/// signature and ksmith_entry. `kernel_path` is where the candidate is written.
std::string NvrtcHostWrapper(const Task& task, const std::string& kernel_path);

/// ksmith's launcher object's source: the exported slot and the ksmith_launch_kernel that the
/// host header's launches call. Compiled once per host compiler, linked into every library.
std::string NvrtcLauncherSource();

}  // namespace ksmith
