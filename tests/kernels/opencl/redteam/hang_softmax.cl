// expect: timeout
// tries: a loop whose exit condition never holds (the stride is zero for every item): the launch
// never finishes.
// cause: no answer
// args: --timeout-ms 1500
// @launch softmax global=(rows) local=(1)
__kernel void softmax(__global const float* x, __global float* y, long rows, long cols) {
  const long r = get_global_id(0);
  const long stride = get_local_id(0);  // always 0
  for (long c = 0; c < cols; c += stride) y[r * cols + c] = x[r * cols + c];
}
