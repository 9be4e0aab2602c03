// Tuner seed for vector_add in OpenCL C: each work-item handles PER_ITEM elements, WG apart, so
// that a work-group's items touch consecutive elements at each step (c = a + b).
// @launch vector_add global=((n + PER_ITEM - 1) / PER_ITEM) local=(WG)

// @tune WG: 64, 128, 256, 512
#ifndef WG
#define WG 256
#endif

// @tune PER_ITEM: 1, 2, 4, 8
#ifndef PER_ITEM
#define PER_ITEM 4
#endif

__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long start = (long)get_group_id(0) * WG * PER_ITEM + get_local_id(0);
  for (int e = 0; e < PER_ITEM; ++e) {
    const long i = start + (long)e * WG;
    if (i < n) {
      c[i] = a[i] + b[i];
    }
  }
}
