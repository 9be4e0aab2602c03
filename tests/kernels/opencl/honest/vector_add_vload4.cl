// An honest vector_add as OpenCL users write it: four elements per work-item through vload4 and
// vstore4 (OpenCL C's vector loads need only the element's alignment), the last partial group of
// four element by element.
// @launch vector_add global=((n + 3) / 4) local=(128)
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long q = get_global_id(0);
  const long i = q * 4;
  if (i + 4 <= n) {
    vstore4(vload4(q, a) + vload4(q, b), q, c);
  } else {
    for (long j = i; j < n; ++j) c[j] = a[j] + b[j];
  }
}
