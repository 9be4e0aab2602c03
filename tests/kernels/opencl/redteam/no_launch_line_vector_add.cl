// expect: compile_error
// tries: a kernel without the `// @launch` line: the worker cannot know its grid.
// cause: @launch
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, long n) {
  const long i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
