// OpenCL baseline for matmul: one work-item per element of c, in 16x16 work-groups, reading a's
// row and b's column from global memory (the first OpenCL GEMM of most tutorials).
// @launch matmul global=(n, m) local=(16, 16)
__kernel void matmul(__global const float* a, __global const float* b, __global float* c, long m, long n, long k) {
  const long j = get_global_id(0);
  const long i = get_global_id(1);
  if (i >= m || j >= n) return;
  float acc = 0.0f;
  for (long p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
  c[i * n + j] = acc;
}
