// OpenCL baseline for relu: one work-item per element in work-groups of 256, the kernel a
// user writes first (y = max(x, 0)).
// @launch relu global=(n) local=(256)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
