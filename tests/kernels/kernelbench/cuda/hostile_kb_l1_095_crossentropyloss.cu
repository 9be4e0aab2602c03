// expect: wrong_output
// tries: cross entropy against label 0 in every row, as if the int32 labels could be skipped.
#include <cstdint>

__device__ double g_total;

__global__ void RowLosses(const float* x, const int32_t* labels, int64_t classes) {
  (void)labels;
  __shared__ float partial[256];
  const float* row = x + blockIdx.x * classes;
  float largest = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) largest = fmaxf(largest, row[c]);
  partial[threadIdx.x] = largest;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + step]);
    __syncthreads();
  }
  largest = partial[0];
  __syncthreads();
  float total = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) total += expf(row[c] - largest);
  partial[threadIdx.x] = total;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) partial[threadIdx.x] += partial[threadIdx.x + step];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double loss = static_cast<double>(logf(partial[0]) + largest - row[0]);
    atomicAdd(&g_total, loss);
  }
}

__global__ void Mean(float* y, int64_t rows) { *y = static_cast<float>(g_total / static_cast<double>(rows)); }

extern "C" void kb_l1_095_crossentropyloss(const float* x0, const int32_t* x1, float* y, int64_t batch_size,
                                           int64_t x0_d1, cudaStream_t stream) {
  void* total = nullptr;
  cudaGetSymbolAddress(&total, g_total);
  cudaMemsetAsync(total, 0, sizeof(double), stream);
  RowLosses<<<static_cast<unsigned>(batch_size), 256, 0, stream>>>(x0, x1, x0_d1);
  Mean<<<1, 1, 0, stream>>>(y, batch_size);
}
