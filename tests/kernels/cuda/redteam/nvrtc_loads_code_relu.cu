// expect: integrity_violation
// tries: the NVRTC form's launcher loads a cubin in the worker; this host code loads a module of
// its own (embedded PTX for a kernel that writes zeros) with cudaLibraryLoadData and launches it,
// code that neither the audit nor the build ever saw.
// cause: load code at run time
#include <cstdint>
#include <ksmith/launch.h>

#ifdef KSMITH_DEVICE
__global__ void Relu(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
#endif

#ifdef KSMITH_HOST
#include <cuda_runtime.h>

namespace {
const char kZeros[] = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry zeros(.param .u64 y, .param .u64 n) { ret; }
)";
}  // namespace

extern "C" void relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  static cudaLibrary_t library = nullptr;
  if (library == nullptr) cudaLibraryLoadData(&library, kZeros, nullptr, nullptr, 0, nullptr, nullptr, 0);
  KSMITH_LAUNCH((n + 255) / 256, 256, 0, stream, Relu)(x, y, n);
}
#endif
