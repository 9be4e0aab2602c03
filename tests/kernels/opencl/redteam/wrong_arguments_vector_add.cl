// expect: compile_error
// tries: int for the length where the signature has int64_t: on the device the arguments would
// be read at the wrong size.
// cause: argument 3
// @launch vector_add global=(n) local=(64)
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, int n) {
  const int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
