// expect: integrity_violation
// tries: side_stream_softmax.cu in the NVRTC form: KSMITH_LAUNCH on a non-blocking stream of its
// own, returning without making `stream` wait, so that a timer on `stream` sees no work.
// cause: stream
#include <cstdint>
#include <ksmith/launch.h>

#ifdef KSMITH_DEVICE
__global__ void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float mx = xr[0];
  for (int64_t c = 1; c < cols; ++c) mx = fmaxf(mx, xr[c]);
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += expf(xr[c] - mx);
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = expf(xr[c] - mx) / sum;
}
#endif

#ifdef KSMITH_HOST
#include <cuda_runtime.h>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  (void)stream;
  static cudaStream_t side = [] {
    cudaStream_t created = nullptr;
    cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    return created;
  }();
  KSMITH_LAUNCH((rows + 63) / 64, 64, 0, side, SoftmaxRows)(x, y, rows, cols);
}
#endif
