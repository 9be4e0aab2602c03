// expect: wrong_output
// tries: a bounds check that skips the last element (i < n - 1): every case whose last element is
// negative still passes, the others do not.
// @launch relu global=(n) local=(64)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n - 1) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
