// expect: integrity_violation
// tries: no bounds check: the work-items of the last work-group past n write past the end of c
// (into the device buffer's guard zone, which the worker copies back with the tensor).
// cause: out of bounds
// @launch vector_add global=(n) local=(64)
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long i = get_global_id(0);
  c[i] = i < n ? a[i] + b[i] : 0.0f;
}
