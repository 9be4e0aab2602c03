// An honest gelu with a fixed grid and a grid-stride loop (the CUDA habit, carried to OpenCL):
// 256 work-groups of 256 items whatever n is.
// @launch gelu global=(65536) local=(256)
__kernel void gelu(__global const float* x, __global float* y, long n) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erf(v * M_SQRT1_2_F));
  }
}
