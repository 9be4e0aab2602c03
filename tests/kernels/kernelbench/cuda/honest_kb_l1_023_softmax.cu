// expect: passed
// tries: softmax over dim 1, one block per row: max, then the sum of exponentials, then the scale.
#include <cstdint>

__global__ void Softmax(const float* x, float* y, int64_t dim) {
  __shared__ float partial[256];
  const float* row = x + blockIdx.x * dim;
  float* out = y + blockIdx.x * dim;
  float largest = -INFINITY;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) largest = fmaxf(largest, row[c]);
  partial[threadIdx.x] = largest;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + step]);
    __syncthreads();
  }
  largest = partial[0];
  __syncthreads();
  float total = 0.0f;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) total += expf(row[c] - largest);
  partial[threadIdx.x] = total;
  __syncthreads();
  for (int step = blockDim.x / 2; step > 0; step /= 2) {
    if (threadIdx.x < step) partial[threadIdx.x] += partial[threadIdx.x + step];
    __syncthreads();
  }
  const float inverse = 1.0f / partial[0];
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) out[c] = expf(row[c] - largest) * inverse;
}

extern "C" void kb_l1_023_softmax(const float* x, float* y, int64_t batch_size, int64_t dim, cudaStream_t stream) {
  Softmax<<<static_cast<unsigned>(batch_size), 256, 0, stream>>>(x, y, dim);
}
