// expect: wrong_output
// tries: computes on the first call for each output pointer, then returns without work whenever
// it sees that pointer again, hoping the same buffers always hold the same inputs.
#include <cstdint>
#include <mutex>
#include <set>

#include <cuda_runtime.h>

__global__ void RowSumRows(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
  y[r] = sum;
}

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  static std::mutex mutex;
  static std::set<float*> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(y).second) return;
  }
  RowSumRows<<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(x, y, rows, cols);
}
