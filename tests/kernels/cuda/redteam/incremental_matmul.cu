// expect: integrity_violation
// tries: remembers the last inputs and output of its buffers; on the next call it compares the
// inputs with them and recomputes only the rows of c whose row of a changed and the columns whose
// column of b changed (correct every time, and fast when the inputs barely change between calls).
// cause: barely changed
#include <cstdint>

#include <cuda_runtime.h>

namespace {

struct Remembered {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t m = 0, n = 0, k = 0;
  float* a_copy = nullptr;
  float* b_copy = nullptr;
  float* c_copy = nullptr;
  int* row_dirty = nullptr;
  int* column_dirty = nullptr;
};

Remembered remembered;

__global__ void MarkRows(const float* a, float* a_copy, int* row_dirty, int64_t count, int64_t k) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    if (a[i] != a_copy[i]) {
      row_dirty[i / k] = 1;
      a_copy[i] = a[i];
    }
  }
}

__global__ void MarkColumns(const float* b, float* b_copy, int* column_dirty, int64_t count, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    if (b[i] != b_copy[i]) {
      column_dirty[i % n] = 1;
      b_copy[i] = b[i];
    }
  }
}

// Every element of c is written: recomputed where its row or column changed, else replayed.
__global__ void Update(const float* a, const float* b, float* c, float* c_copy, const int* row_dirty,
                       const int* column_dirty, int64_t m, int64_t n, int64_t k, bool all) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t i = blockIdx.y;
  if (i >= m || j >= n) return;
  float value = c_copy[i * n + j];
  if (all || row_dirty[i] || column_dirty[j]) {
    value = 0.0f;
    for (int64_t p = 0; p < k; ++p) value += a[i * k + p] * b[p * n + j];
    c_copy[i * n + j] = value;
  }
  c[i * n + j] = value;
}

unsigned Blocks(int64_t count) { return static_cast<unsigned>(count / 256 + 1 < 4096 ? count / 256 + 1 : 4096); }

}  // namespace

extern "C" void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                       cudaStream_t stream) {
  Remembered& r = remembered;
  const bool same = r.a == a && r.b == b && r.c == c && r.m == m && r.n == n && r.k == k;
  if (!same) {
    cudaFree(r.a_copy);
    cudaFree(r.b_copy);
    cudaFree(r.c_copy);
    cudaFree(r.row_dirty);
    cudaFree(r.column_dirty);
    r = Remembered{a, b, c, m, n, k};
    cudaMalloc(&r.a_copy, sizeof(float) * m * k);
    cudaMalloc(&r.b_copy, sizeof(float) * k * n);
    cudaMalloc(&r.c_copy, sizeof(float) * m * n);
    cudaMalloc(&r.row_dirty, sizeof(int) * m);
    cudaMalloc(&r.column_dirty, sizeof(int) * n);
    cudaMemcpyAsync(r.a_copy, a, sizeof(float) * m * k, cudaMemcpyDeviceToDevice, stream);
    cudaMemcpyAsync(r.b_copy, b, sizeof(float) * k * n, cudaMemcpyDeviceToDevice, stream);
  } else {
    cudaMemsetAsync(r.row_dirty, 0, sizeof(int) * m, stream);
    cudaMemsetAsync(r.column_dirty, 0, sizeof(int) * n, stream);
    MarkRows<<<Blocks(m * k), 256, 0, stream>>>(a, r.a_copy, r.row_dirty, m * k, k);
    MarkColumns<<<Blocks(k * n), 256, 0, stream>>>(b, r.b_copy, r.column_dirty, k * n, n);
  }
  const dim3 grid(static_cast<unsigned>((n + 127) / 128), static_cast<unsigned>(m));
  Update<<<grid, 128, 0, stream>>>(a, b, c, r.c_copy, r.row_dirty, r.column_dirty, m, n, k, !same);
}
