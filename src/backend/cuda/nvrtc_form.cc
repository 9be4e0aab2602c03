#include "backend/cuda/nvrtc_form.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "backend/cuda/nvcc_compiler.h"
#include "core/strings.h"
#include "tensor/dtype.h"

namespace ksmith {
namespace {

// Bump when the wrapper's text or the module's layout changes (part of every build's key).
constexpr const char* kWrapperVersion = "ksmith-nvrtc-wrapper-1";

// The source with comments replaced by spaces (newlines kept, so that offsets keep their line)
// and string and character literals kept as they are.
std::string WithoutComments(std::string_view source) {
  std::string out(source);
  size_t i = 0;
  while (i < out.size()) {
    if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i++];
      while (i < out.size() && out[i] != quote && out[i] != '\n') i += out[i] == '\\' ? 2 : 1;
      ++i;
    } else if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const size_t end = out.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i) {
        if (out[i] != '\n') out[i] = ' ';
      }
    } else {
      ++i;
    }
  }
  return out;
}

size_t LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// As `#__VA_ARGS__` spells it: whitespace runs as one space, none at either end.
std::string Stringized(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

constexpr const char* kHostLaunchHeader = R"(// ksmith's launch interface, host side (the NVRTC form of the CUDA contract, docs/design.md).
#pragma once
#include <cstddef>
#include <cstdint>

// __host__, __device__, __forceinline__ as the CUDA runtime defines them for a host compiler, so
// that __host__ __device__ helpers written outside both sections compile here too.
#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <crt/host_defines.h>
#undef __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__

// As the CUDA runtime declares it, so that <cuda_runtime.h> may be included beside this header.
typedef struct CUstream_st* cudaStream_t;

extern "C" int ksmith_launch_kernel(const char* kernel, const unsigned long long* grid,
                                    const unsigned long long* block, unsigned long long shared_bytes,
                                    cudaStream_t stream, void** arguments,
                                    const unsigned long long* argument_bytes, int argument_count);

namespace ksmith {

// A grid or block size: one to three integers, or anything with x, y and z (dim3).
struct Dim3 {
  unsigned long long x = 1, y = 1, z = 1;
  Dim3(unsigned long long x_ = 1, unsigned long long y_ = 1, unsigned long long z_ = 1) : x(x_), y(y_), z(z_) {}
  template <class D, class = decltype(D::x), class = decltype(D::y), class = decltype(D::z)>
  Dim3(const D& d) : x(d.x), y(d.y), z(d.z) {}
};

// One launch of the kernel `kernel` names; the call passes its arguments. Returns the CUDA error
// code of the launch (0: launched).
class Launch {
 public:
  Launch(const char* kernel, Dim3 grid, Dim3 block, unsigned long long shared_bytes, cudaStream_t stream)
      : kernel_(kernel), grid_{grid.x, grid.y, grid.z}, block_{block.x, block.y, block.z},
        shared_bytes_(shared_bytes), stream_(stream) {}

  template <class... Args>
  int operator()(Args... arguments) const {
    void* pointers[sizeof...(Args) + 1] = {static_cast<void*>(&arguments)..., nullptr};
    const unsigned long long bytes[sizeof...(Args) + 1] = {sizeof(Args)..., 0};
    return ksmith_launch_kernel(kernel_, grid_, block_, shared_bytes_, stream_, pointers, bytes,
                                static_cast<int>(sizeof...(Args)));
  }

 private:
  const char* kernel_;
  unsigned long long grid_[3];
  unsigned long long block_[3];
  unsigned long long shared_bytes_;
  cudaStream_t stream_;
};

}  // namespace ksmith

// KSMITH_LAUNCH(grid, block, shared_bytes, stream, kernel)(arguments...): kernel<<<grid, block,
// shared_bytes, stream>>>(arguments...), where `kernel` may be a template instance.
#define KSMITH_LAUNCH(grid, block, shared_bytes, stream, ...) \
  ::ksmith::Launch(#__VA_ARGS__, (grid), (block), (shared_bytes), (stream))
)";

// What nvcc's implicit includes give device code (fixed-width integers, INFINITY, FLT_MAX),
// given to NVRTC's too, so that kernels written for nvcc compile unchanged.
constexpr const char* kDeviceLaunchHeader = R"(// ksmith's launch interface, device side: NVRTC compiles
// KSMITH_DEVICE; launches are host code (KSMITH_LAUNCH in KSMITH_HOST).
#pragma once
#include <cstdint>
#include <cstddef>
#include <cfloat>
#include <climits>
#include <cmath>
)";

constexpr const char* kDeviceStdint = R"(// ksmith's <cstdint> for NVRTC, which has none.
#pragma once
#include <cuda/std/cstdint>
using cuda::std::int8_t;
using cuda::std::int16_t;
using cuda::std::int32_t;
using cuda::std::int64_t;
using cuda::std::uint8_t;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::intptr_t;
using cuda::std::uintptr_t;
namespace std {
using cuda::std::int8_t;
using cuda::std::int16_t;
using cuda::std::int32_t;
using cuda::std::int64_t;
using cuda::std::uint8_t;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::intptr_t;
using cuda::std::uintptr_t;
}  // namespace std
)";

constexpr const char* kDeviceStddef = R"(// ksmith's <cstddef> for NVRTC (size_t and ptrdiff_t are built in).
#pragma once
namespace std {
using ::size_t;
using ::ptrdiff_t;
}  // namespace std
#ifndef NULL
#define NULL 0
#endif
)";

constexpr const char* kDeviceFloat = R"(// ksmith's <cfloat> for NVRTC.
#pragma once
#ifndef FLT_MAX
#define FLT_MAX 3.40282347e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.17549435e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.19209290e-07F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623157e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
)";

constexpr const char* kDeviceLimits = R"(// ksmith's <climits> for NVRTC.
#pragma once
#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef INT_MIN
#define INT_MIN (-INT_MAX - 1)
#endif
#ifndef UINT_MAX
#define UINT_MAX 4294967295U
#endif
#ifndef LONG_MAX
#define LONG_MAX 9223372036854775807L
#endif
#ifndef LONG_MIN
#define LONG_MIN (-LONG_MAX - 1L)
#endif
#ifndef LLONG_MAX
#define LLONG_MAX 9223372036854775807LL
#endif
#ifndef LLONG_MIN
#define LLONG_MIN (-LLONG_MAX - 1LL)
#endif
#ifndef ULLONG_MAX
#define ULLONG_MAX 18446744073709551615ULL
#endif
)";

constexpr const char* kDeviceMath = R"(// ksmith's <cmath> for NVRTC: the math functions are built in; the macros are not.
#pragma once
#ifndef INFINITY
#define INFINITY __builtin_bit_cast(float, 0x7f800000u)
#endif
#ifndef NAN
#define NAN __builtin_bit_cast(float, 0x7fc00000u)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_bit_cast(float, 0x7f800000u)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ull)
#endif
#ifndef M_E
#define M_E 2.71828182845904523536
#endif
#ifndef M_LN2
#define M_LN2 0.693147180559945309417
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_PI_2
#define M_PI_2 1.57079632679489661923
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.707106781186547524401
#endif
)";

constexpr const char* kDeviceEmpty = R"(// ksmith: NVRTC has the CUDA runtime's device side built in.
#pragma once
)";

// The part of the host wrapper that the worker binds: the module's layout must match
// NvrtcModuleView (cuda_worker/nvrtc_module.h).
constexpr const char* kLauncherSource = R"(
namespace {
using KsmithLaunchFunction = int (*)(void* context, const char* kernel, const unsigned long long* grid,
                                     const unsigned long long* block, unsigned long long shared_bytes,
                                     void* stream, void** arguments, const unsigned long long* argument_bytes,
                                     int argument_count);
struct KsmithModule {
  unsigned version;
  const void* cubin;
  unsigned long long cubin_bytes;
  const char* kernels;
  KsmithLaunchFunction* launch;
  void** launch_context;
};
KsmithLaunchFunction ksmith_bound_launch = nullptr;
void* ksmith_bound_context = nullptr;
}  // namespace
extern "C" const unsigned char ksmith_cubin_begin[];
extern "C" const unsigned char ksmith_cubin_end[];
extern "C" const char ksmith_kernel_table[];
extern "C" __attribute__((visibility("default"))) const KsmithModule* ksmith_module() {
  static const KsmithModule module{@VERSION@, ksmith_cubin_begin,
                                   static_cast<unsigned long long>(ksmith_cubin_end - ksmith_cubin_begin),
                                   ksmith_kernel_table, &ksmith_bound_launch, &ksmith_bound_context};
  return &module;
}
extern "C" int ksmith_launch_kernel(const char* kernel, const unsigned long long* grid,
                                    const unsigned long long* block, unsigned long long shared_bytes,
                                    cudaStream_t stream, void** arguments,
                                    const unsigned long long* argument_bytes, int argument_count) {
  // cudaErrorNotReady would read as "still running": 1 (cudaErrorInvalidValue) says misuse.
  if (ksmith_bound_launch == nullptr) return 1;
  return ksmith_bound_launch(ksmith_bound_context, kernel, grid, block, shared_bytes, stream, arguments,
                             argument_bytes, argument_count);
}
)";

std::string AssemblerString(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool IsNvrtcForm(std::string_view source) {
  static const std::regex include(R"(#\s*include\s*[<"]ksmith/launch\.h[>"])");
  const std::string text = WithoutComments(source);
  return std::regex_search(text, include);
}

Result<std::vector<std::string>> LaunchedKernels(std::string_view source) {
  const std::string text = WithoutComments(source);
  constexpr std::string_view kMacro = "KSMITH_LAUNCH";
  std::vector<std::string> kernels;
  std::set<std::string> seen;
  for (size_t at = text.find(kMacro); at != std::string::npos; at = text.find(kMacro, at + kMacro.size())) {
    if (at > 0 && IsIdentifierChar(text[at - 1])) continue;
    size_t i = at + kMacro.size();
    if (i < text.size() && IsIdentifierChar(text[i])) continue;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != '(') continue;  // the name alone (in a comment's place, a #ifdef)
    // The arguments, split at the commas outside any bracket: the kernel is all after the fourth.
    int depth = 0;
    size_t commas = 0, kernel_start = std::string::npos, end = std::string::npos;
    for (size_t j = i + 1; j < text.size(); ++j) {
      const char c = text[j];
      if (c == '"' || c == '\'') {
        for (++j; j < text.size() && text[j] != c; j += text[j] == '\\' ? 2 : 1) {
        }
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) {
          end = j;
          break;
        }
        --depth;
      } else if (c == ',' && depth == 0) {
        if (++commas == 4) kernel_start = j + 1;
      }
    }
    if (end == std::string::npos) {
      return MakeError(ErrorKind::kInvalidArgument, "line {}: KSMITH_LAUNCH( is never closed", LineOf(text, at));
    }
    const std::string kernel = kernel_start == std::string::npos ? "" : Stringized(text.substr(kernel_start, end - kernel_start));
    if (kernel.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "line {}: KSMITH_LAUNCH takes (grid, block, shared_bytes, stream, kernel), then the "
                       "kernel's arguments: the kernel is missing",
                       LineOf(text, at));
    }
    if (seen.insert(kernel).second) kernels.push_back(kernel);
  }
  return kernels;
}

const std::map<std::string, std::string>& NvrtcHostHeaders() {
  static const std::map<std::string, std::string> headers = {{"ksmith/launch.h", kHostLaunchHeader}};
  return headers;
}

const std::map<std::string, std::string>& NvrtcDeviceHeaders() {
  static const std::map<std::string, std::string> headers = {
      {"ksmith/launch.h", kDeviceLaunchHeader}, {"cstdint", kDeviceStdint},   {"stdint.h", kDeviceStdint},
      {"cstddef", kDeviceStddef},               {"stddef.h", kDeviceStddef},  {"cfloat", kDeviceFloat},
      {"float.h", kDeviceFloat},                {"climits", kDeviceLimits},   {"limits.h", kDeviceLimits},
      {"cmath", kDeviceMath},                   {"math.h", kDeviceMath},      {"cuda_runtime.h", kDeviceEmpty},
      {"cuda_runtime_api.h", kDeviceEmpty},     {"device_launch_parameters.h", kDeviceEmpty}};
  return headers;
}

std::string NvrtcHostWrapper(const Task& task, const std::string& kernel_path) {
  const CudaEntryBinding entry = BindCudaEntry(task, KernelRole::kCandidate);
  // The half-precision headers cost the host compiler about 0.2 s: only where the task has them.
  bool half = false, bfloat = false;
  for (const auto* tensors : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *tensors) {
      half = half || tensor.dtype == DType::kFloat16;
      bfloat = bfloat || tensor.dtype == DType::kBFloat16;
    }
  }
  std::string launcher = kLauncherSource;
  launcher.replace(launcher.find("@VERSION@"), 9, std::to_string(kNvrtcModuleVersion));
  return fmt::format(
      "// Generated by ksmith ({}): the candidate's host code, bound to the CUDA worker's entry point.\n"
      "#include <cstddef>\n#include <cstdint>\n{}{}"
      "#include <ksmith/launch.h>\n"
      "#include \"{}\"\n"
      "#line 1 \"ksmith-expected-signature\"\n"
      "{};\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void ksmith_entry("
      "void* const* pointers, const int64_t* scalars, void* stream) {{\n"
      "  (void)pointers; (void)scalars;\n  {};\n}}\n"
      "#line 1 \"ksmith-launcher\"\n{}",
      kWrapperVersion, half ? "#include <cuda_fp16.h>\n" : "", bfloat ? "#include <cuda_bf16.h>\n" : "", kernel_path,
      entry.declaration, entry.call, launcher);
}

std::string NvrtcDataAssembly(const std::string& cubin_path,
                              const std::vector<std::pair<std::string, std::string>>& kernels) {
  std::string table;
  for (const auto& [expression, mangled] : kernels) table += expression + "\t" + mangled + "\n";
  return fmt::format(
      "# Generated by ksmith ({}): the candidate's cubin and its kernels, for the CUDA worker.\n"
      "  .section .rodata.ksmith_cubin,\"a\"\n  .balign 64\n"
      "  .globl ksmith_cubin_begin\n  .hidden ksmith_cubin_begin\nksmith_cubin_begin:\n"
      "  .incbin \"{}\"\n"
      "  .globl ksmith_cubin_end\n  .hidden ksmith_cubin_end\nksmith_cubin_end:\n  .byte 0\n"
      "  .section .rodata.ksmith_kernels,\"a\"\n"
      "  .globl ksmith_kernel_table\n  .hidden ksmith_kernel_table\nksmith_kernel_table:\n"
      "  .asciz \"{}\"\n"
      "  .section .note.GNU-stack,\"\",@progbits\n",
      kWrapperVersion, AssemblerString(cubin_path), AssemblerString(table));
}

}  // namespace ksmith
