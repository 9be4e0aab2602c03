// OpenCL baseline for log_softmax: one work-group of 256 items per row (max, log of the sum of exp(x - max), then x - max - log(sum)), fp32
// partial results combined by a tree reduction in local memory.
// @launch log_softmax global=(rows * WG) local=(WG)
#define WG 256

// The work-group's reduction of `value` with OP; every item gets the result.
float reduce_sum(float value, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] = scratch[lid] + scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

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

__kernel void log_softmax(__global const float* x, __global float* y, long rows, long cols) {
  __local float scratch[WG];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const float* row = x + r * cols;
  float m = -INFINITY;
  for (long c = lid; c < cols; c += WG) m = fmax(m, row[c]);
  m = reduce_max(m, scratch);
  float s = 0.0f;
  for (long c = lid; c < cols; c += WG) s += exp(row[c] - m);
  s = reduce_sum(s, scratch);
  const float shift = m + log(s);
  __global float* out = y + r * cols;
  for (long c = lid; c < cols; c += WG) out[c] = row[c] - shift;
}
