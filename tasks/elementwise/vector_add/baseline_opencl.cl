// OpenCL baseline for vector_add: one work-item per element in work-groups of 256, the kernel a
// user writes first (c = a + b).
// @launch vector_add global=(n) local=(256)
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long i = get_global_id(0);
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}
