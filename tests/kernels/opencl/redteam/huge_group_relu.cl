// expect: runtime_error
// tries: a work-group larger than any device allows (1 << 20 items).
// cause: work-group
// @launch relu global=(n) local=(1048576)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) y[i] = fmax(x[i], 0.0f);
}
