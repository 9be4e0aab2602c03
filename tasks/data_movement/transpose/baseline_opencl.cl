// OpenCL baseline for transpose: one work-item per element, reading x by rows and writing y by
// columns (uncoalesced writes), in 16x16 work-groups.
// @launch transpose global=(cols, rows) local=(16, 16)
__kernel void transpose(__global const float* x, __global float* y, long rows, long cols) {
  const long c = get_global_id(0);
  const long r = get_global_id(1);
  if (r < rows && c < cols) y[c * rows + r] = x[r * cols + c];
}
