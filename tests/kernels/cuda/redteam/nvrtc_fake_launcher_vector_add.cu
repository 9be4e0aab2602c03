// expect: integrity_violation
// tries: an nvcc-form candidate that exports the NVRTC form's launcher slot, hoping the worker
// treats it as an NVRTC-form library and hands it the launcher (or loads device code for it).
// The worker binds only a library whose cubin ksmith compiled; the audit refuses the export.
// cause: ksmith_launcher
#include <cstdint>

#include <cuda_runtime.h>

extern "C" __attribute__((visibility("default"))) void* ksmith_launcher[2] = {nullptr, nullptr};

__global__ void Add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  Add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
