// An honest matmul in the style of the well-known OpenCL SGEMM tutorials (tiles in local memory,
// each work-item computing WPT elements of a column of c): 32x32 tiles, 8 elements per item.
// @launch matmul global=(n, (m + WPT - 1) / WPT) local=(TS, TS / WPT)
#define TS 32
#define WPT 8
#define RTS (TS / WPT)

__kernel void matmul(__global const float* a, __global const float* b, __global float* c, long m, long n, long k) {
  __local float a_tile[TS][TS];
  __local float b_tile[TS][TS];
  const int col = get_local_id(0);
  const int row = get_local_id(1);
  const long global_col = (long)get_group_id(0) * TS + col;
  const long global_row = (long)get_group_id(1) * TS + row;
  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
  for (long t = 0; t < k; t += TS) {
    for (int w = 0; w < WPT; ++w) {
      const long r = global_row + w * RTS;
      a_tile[row + w * RTS][col] = (r < m && t + col < k) ? a[r * k + t + col] : 0.0f;
      b_tile[row + w * RTS][col] = (t + row + w * RTS < k && global_col < n) ? b[(t + row + w * RTS) * n + global_col] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TS; ++p) {
      const float bv = b_tile[p][col];
      for (int w = 0; w < WPT; ++w) acc[w] += a_tile[row + w * RTS][p] * bv;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const long r = global_row + w * RTS;
    if (r < m && global_col < n) c[r * n + global_col] = acc[w];
  }
}
