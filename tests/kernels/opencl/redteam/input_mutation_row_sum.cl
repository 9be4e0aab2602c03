// expect: integrity_violation
// tries: sums the row in place, leaving its prefix sums in x: the right answer, and a caller's input destroyed.
// cause: modified its input
// @launch row_sum global=(rows) local=(1)
__kernel void row_sum(__global float* x, __global float* y, long rows, long cols) {
  const long r = get_global_id(0);
  if (r >= rows) return;
  __global float* row = x + r * cols;
  for (long c = 1; c < cols; ++c) row[c] += row[c - 1];
  y[r] = cols > 0 ? row[cols - 1] : 0.0f;
}
