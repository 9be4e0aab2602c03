// Tuner seed for transpose in OpenCL C: TILE x TILE tiles staged in local memory (one column of
// padding against bank conflicts), so that both the reads of x and the writes of y are by rows.
// @launch transpose global=(cols, rows) local=(TILE, TILE)

// @tune TILE: 8, 16, 32
#ifndef TILE
#define TILE 16
#endif

__kernel void transpose(__global const float* x, __global float* y, long rows, long cols) {
  __local float tile[TILE][TILE + 1];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const long c = get_global_id(0);
  const long r = get_global_id(1);
  if (r < rows && c < cols) tile[ty][tx] = x[r * cols + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  // This work-group's tile, transposed: item (tx, ty) writes y's row (c0 + ty), column (r0 + tx).
  const long r_out = (long)get_group_id(1) * TILE + tx;
  const long c_out = (long)get_group_id(0) * TILE + ty;
  if (r_out < rows && c_out < cols) y[c_out * rows + r_out] = tile[tx][ty];
}
