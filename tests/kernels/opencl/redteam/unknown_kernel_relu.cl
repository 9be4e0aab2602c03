// expect: compile_error
// tries: a `@launch` line naming a kernel the source does not define (a typo).
// cause: no __kernel named
// @launch rleu global=(n) local=(64)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) y[i] = fmax(x[i], 0.0f);
}
