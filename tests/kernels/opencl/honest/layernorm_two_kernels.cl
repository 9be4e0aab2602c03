// An honest layernorm in two launches, as a user splits it: the first keeps each row's mean and
// inverse deviation in the first two elements of the row's output, the second reads them back
// before overwriting them. One work-group of 128 items per row in each.
// @launch row_stats global=(rows * 128) local=(128)
// @launch apply_norm global=(rows * 128) local=(128)
#define WG 128

float reduce_sum(float value, __local float* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

// y[r, 0] = mean, y[r, 1] = 1 / sqrt(var + eps) (rows of one element keep only the mean there,
// and the second launch recomputes what it needs).
__kernel void row_stats(__global const float* x, __global const float* gamma, __global const float* beta,
                        __global float* y, long rows, long cols) {
  __local float scratch[WG];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const float* row = x + r * cols;
  float s = 0.0f;
  for (long c = lid; c < cols; c += WG) s += row[c];
  const float mean = reduce_sum(s, scratch) / (float)cols;
  float v = 0.0f;
  for (long c = lid; c < cols; c += WG) v += (row[c] - mean) * (row[c] - mean);
  const float rstd = rsqrt(reduce_sum(v, scratch) / (float)cols + 1e-5f);
  if (lid == 0) {
    y[r * cols] = mean;
    if (cols > 1) y[r * cols + 1] = rstd;
  }
}

__kernel void apply_norm(__global const float* x, __global const float* gamma, __global const float* beta,
                        __global float* y, long rows, long cols) {
  __local float stats[2];
  const long r = get_group_id(0);
  const int lid = get_local_id(0);
  __global const float* row = x + r * cols;
  float rstd;
  if (cols > 1) {
    if (lid == 0) {
      stats[0] = y[r * cols];
      stats[1] = y[r * cols + 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    rstd = stats[1];
  } else {
    rstd = rsqrt(1e-5f);  // a row of one element has no deviation
    if (lid == 0) stats[0] = row[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float mean = stats[0];
  for (long c = lid; c < cols; c += WG) y[r * cols + c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
}
