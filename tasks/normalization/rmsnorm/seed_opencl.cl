// Tuner seed for rmsnorm in OpenCL C: one work-group of WG items per row (the mean square, then x / sqrt(ms + eps) * weight); each
// item strides over the row, then the work-group reduces in local memory.
// @launch rmsnorm global=(rows * WG) local=(WG)

// @tune WG: 64, 128, 256, 512
#ifndef WG
#define WG 128
#endif

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

__kernel void rmsnorm(__global const float* x, __global const float* weight, __global float* y, long rows, long cols) {
  __local float scratch[WG];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const float* row = x + r * cols;
  float s = 0.0f;
  for (long c = lid; c < cols; c += WG) s += row[c] * row[c];
  const float scale = rsqrt(reduce_sum(s, scratch) / (float)cols + 1e-6f);
  __global float* out = y + r * cols;
  for (long c = lid; c < cols; c += WG) out[c] = row[c] * scale * weight[c];
}
