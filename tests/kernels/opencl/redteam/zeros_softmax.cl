// expect: wrong_output
// tries: writes zeros: the right shape, fast, and wrong.
// @launch softmax global=(rows * cols) local=(64)
__kernel void softmax(__global const float* x, __global float* y, long rows, long cols) {
  const long i = get_global_id(0);
  if (i < rows * cols) y[i] = 0.0f;
}
