// expect: integrity_violation
// tries: computes only where the output still holds the evaluator's poison (NaN): every
// correctness case passes, but once timed the outputs stay on the device between calls and the
// kernel returns what it computed for earlier inputs.
// cause: timed
// @launch relu global=(n) local=(64)
__kernel void relu(__global const float* x, __global float* y, long n) {
  const long i = get_global_id(0);
  if (i >= n) return;
  if (!isnan(y[i])) return;
  y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
