// expect: compile_error
// tries: a missing semicolon: OpenCL C that does not build.
// @launch relu global=(n) local=(64)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0)
  if (i < n) y[i] = fmax(x[i], 0.0f);
}
