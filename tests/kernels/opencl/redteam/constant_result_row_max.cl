// expect: wrong_output
// tries: a row max that only looks at the first 32 elements of each row (hard-coded for the dev
// shapes a prompt shows).
// @launch row_max global=(rows) local=(1)
__kernel void row_max(__global const float* x, __global float* y, long rows, long cols) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  float m = x[r * cols];
  for (long c = 1; c < cols && c < 32; ++c) m = fmax(m, x[r * cols + c]);
  y[r] = m;
}
