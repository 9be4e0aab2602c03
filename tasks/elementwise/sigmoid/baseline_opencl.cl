// OpenCL baseline for sigmoid: one work-item per element in work-groups of 256, the kernel a
// user writes first (y = 1 / (1 + exp(-x)); exp(-x) overflowing to inf gives 0).
// @launch sigmoid global=(n) local=(256)
__kernel void sigmoid(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) {
    y[i] = 1.0f / (1.0f + exp(-x[i]));
  }
}
