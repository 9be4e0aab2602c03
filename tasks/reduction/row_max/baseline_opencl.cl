// OpenCL baseline for row_max: one work-group of 256 items per row (y[r] = max of row r), fp32
// partial results combined by a tree reduction in local memory.
// @launch row_max global=(rows * WG) local=(WG)
#define WG 256

// The work-group's reduction of `value` with OP; every item gets the result.
float reduce_max(float value, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] = fmax(scratch[lid], scratch[lid + stride]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

__kernel void row_max(__global const float* x, __global float* y, long rows, long cols) {
  __local float scratch[WG];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const float* row = x + r * cols;
  float acc = -INFINITY;
  for (long c = lid; c < cols; c += WG) acc = fmax(acc, row[c]);
  acc = reduce_max(acc, scratch);
  if (lid == 0) y[r] = acc;
}
