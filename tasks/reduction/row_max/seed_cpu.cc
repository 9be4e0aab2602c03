// Tuner seed for row_max: rows spread over OpenMP threads; each row is scanned LANES values at a
// time into LANES independent running maxima (SIMD lanes, and with LANES above the vector width
// several vector registers, so compares do not wait on each other), which are then combined,
// and the tail finished one value at a time. A maximum is exact in any order.
#include <cstdint>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune LANES: 8, 32
#ifndef LANES
#define LANES 32
#endif

extern "C" void row_max(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (PARALLEL && rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float acc[LANES];
    for (int l = 0; l < LANES; ++l) acc[l] = xr[0];  // a value of the row, never a made-up start
    int64_t c = 0;
    for (; c + LANES <= cols; c += LANES) {
#pragma omp simd
      for (int l = 0; l < LANES; ++l) acc[l] = xr[c + l] > acc[l] ? xr[c + l] : acc[l];
    }
    float mx = acc[0];
    for (int l = 1; l < LANES; ++l) mx = acc[l] > mx ? acc[l] : mx;
    for (; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
    y[r] = mx;
  }
}
