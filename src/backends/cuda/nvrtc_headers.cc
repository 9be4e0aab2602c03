#include "backends/cuda/nvrtc_form.h"

// The headers the NVRTC form's two compilers get (nvrtc_form.h, NvrtcHostHeaders and
// NvrtcDeviceHeaders) and ksmith's launcher object.
namespace ksmith {
namespace {

constexpr const char* kHostLaunchHeader = R"(// ksmith's launch interface, host side (the NVRTC form of the CUDA contract, docs/design.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

// __host__, __device__, __forceinline__ as the CUDA runtime defines them for a host compiler, so
// that __host__ __device__ helpers written outside both sections compile here too.
#define __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__
#include <crt/host_defines.h>
#undef __CUDA_INCLUDE_COMPILER_INTERNAL_HEADERS__

// As the CUDA runtime declares it, so that <cuda_runtime.h> may be included beside this header.
typedef struct CUstream_st* cudaStream_t;

// Defined by ksmith's launcher object, linked into every NVRTC-form library: forwards to the
// CUDA worker. `argument_kinds` has one letter per argument: p pointer, i integer, f floating
// point, o anything else.
extern "C" int ksmith_launch_kernel(const char* kernel, const unsigned long long* grid,
                                    const unsigned long long* block, unsigned long long shared_bytes,
                                    cudaStream_t stream, void** arguments,
                                    const unsigned long long* argument_bytes, const char* argument_kinds,
                                    int argument_count);

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
    const char kinds[sizeof...(Args) + 1] = {Kind<Args>()..., '\0'};
    return ksmith_launch_kernel(kernel_, grid_, block_, shared_bytes_, stream_, pointers, bytes, kinds,
                                static_cast<int>(sizeof...(Args)));
  }

 private:
  // What the worker compares with the kernel's parameter: a float passed for an int parameter of
  // the same size would otherwise be read as its bits.
  template <class T>
  static constexpr char Kind() {
    return std::is_pointer_v<T> || std::is_null_pointer_v<T> ? 'p'
           : std::is_integral_v<T> || std::is_enum_v<T>      ? 'i'
           : std::is_floating_point_v<T>                     ? 'f'
                                                             : 'o';
  }

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

// Compiled once per host compiler and linked into every NVRTC-form library, apart from the
// candidate's translation unit so that nothing the candidate defines can change it. The slot's
// layout is the worker's too (backends/cuda/worker/nvrtc_module.cc, LauncherSlot).
constexpr const char* kLauncherSource = R"(// ksmith's launcher object (backends/cuda/nvrtc_headers.cc).
#include <cstdio>
typedef struct CUstream_st* cudaStream_t;
using KsmithLaunchFunction = int (*)(void* context, const char* kernel, const unsigned long long* grid,
                                     const unsigned long long* block, unsigned long long shared_bytes,
                                     cudaStream_t stream, void** arguments,
                                     const unsigned long long* argument_bytes, const char* argument_kinds,
                                     int argument_count);
struct KsmithLauncherSlot {
  KsmithLaunchFunction launch;
  void* context;
};
// Filled by the CUDA worker once it has loaded the library's cubin.
extern "C" __attribute__((visibility("default"))) KsmithLauncherSlot ksmith_launcher = {nullptr, nullptr};
extern "C" __attribute__((visibility("hidden"))) int ksmith_launch_kernel(
    const char* kernel, const unsigned long long* grid, const unsigned long long* block,
    unsigned long long shared_bytes, cudaStream_t stream, void** arguments,
    const unsigned long long* argument_bytes, const char* argument_kinds, int argument_count) {
  if (ksmith_launcher.launch == nullptr) {
    std::fprintf(stderr, "ksmith: KSMITH_LAUNCH of %s before the CUDA worker bound the launcher\n", kernel);
    return 1;  // cudaErrorInvalidValue
  }
  return ksmith_launcher.launch(ksmith_launcher.context, kernel, grid, block, shared_bytes, stream, arguments,
                                argument_bytes, argument_kinds, argument_count);
}
)";

}  // namespace

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

std::string NvrtcLauncherSource() { return kLauncherSource; }

}  // namespace ksmith
