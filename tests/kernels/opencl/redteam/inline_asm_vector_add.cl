// expect: integrity_violation
// tries: inline assembly, which on a CPU device would be machine code in the worker's process.
// cause: inline_assembly
// @launch vector_add global=(n) local=(64)
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long i = get_global_id(0);
  __asm__ volatile("" ::: "memory");
  if (i < n) c[i] = a[i] + b[i];
}
