// Tuner seed for leaky_relu in OpenCL C: each work-item handles PER_ITEM elements, WG apart, so
// that a work-group's items touch consecutive elements at each step (y = x > 0 ? x : 0.01 x).
// @launch leaky_relu global=((n + PER_ITEM - 1) / PER_ITEM) local=(WG)

// @tune WG: 64, 128, 256, 512
#ifndef WG
#define WG 256
#endif

// @tune PER_ITEM: 1, 2, 4, 8
#ifndef PER_ITEM
#define PER_ITEM 4
#endif

__kernel void leaky_relu(__global const float* x, __global float* y, long n) {
  const long start = (long)get_group_id(0) * WG * PER_ITEM + get_local_id(0);
  for (int e = 0; e < PER_ITEM; ++e) {
    const long i = start + (long)e * WG;
    if (i < n) {
      const float v = x[i];
      y[i] = v > 0.0f ? v : 0.01f * v;
    }
  }
}
