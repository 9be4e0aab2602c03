// OpenCL baseline for gelu: one work-item per element in work-groups of 256, the kernel a
// user writes first (y = 0.5 x (1 + erf(x / sqrt(2)))).
// @launch gelu global=(n) local=(256)
__kernel void gelu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));
  }
}
