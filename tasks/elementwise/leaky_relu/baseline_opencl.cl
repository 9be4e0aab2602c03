// OpenCL baseline for leaky_relu: one work-item per element in work-groups of 256, the kernel a
// user writes first (y = x > 0 ? x : 0.01 x).
// @launch leaky_relu global=(n) local=(256)
__kernel void leaky_relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.01f * v;
  }
}
