// Tuner seed for matmul in OpenCL C: TS x TS tiles of a and b staged in local memory, one
// work-item per element of c; tiles past the matrices' edges read zeros.
// @launch matmul global=(n, m) local=(TS, TS)

// @tune TS: 8, 16, 32
#ifndef TS
#define TS 16
#endif

__kernel void matmul(__global const float* a, __global const float* b, __global float* c, long m, long n, long k) {
  __local float a_tile[TS][TS];
  __local float b_tile[TS][TS];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const long j = get_global_id(0);
  const long i = get_global_id(1);
  float acc = 0.0f;
  for (long p0 = 0; p0 < k; p0 += TS) {
    a_tile[ty][tx] = (i < m && p0 + tx < k) ? a[i * k + p0 + tx] : 0.0f;
    b_tile[ty][tx] = (p0 + ty < k && j < n) ? b[(p0 + ty) * n + j] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int q = 0; q < TS; ++q) acc += a_tile[ty][q] * b_tile[q][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < m && j < n) c[i * n + j] = acc;
}
