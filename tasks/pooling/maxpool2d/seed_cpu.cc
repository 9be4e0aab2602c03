// Tuner seed for maxpool2d (non-overlapping kh x kw windows, stride = window): OpenMP threads over
// output rows (every (plane, i) pair), each of which reads kh input rows.
// ROWS_FIRST 1 first takes the elementwise max of the window's kh input rows into a per-thread
// buffer (contiguous, full-width SIMD), then the max of each group of kw neighbours in it (a
// stride-2 loop the compiler vectorizes when kw is 2); ROWS_FIRST 0 walks each window directly.
#include <cstdint>
#include <vector>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune ROWS_FIRST: 1, 0
#ifndef ROWS_FIRST
#define ROWS_FIRST 1
#endif

namespace {

inline float Max(float a, float b) { return b > a ? b : a; }

// yr[j] = max of the window j of the kh rows starting at xr (rows w apart).
void PoolRow(const float* xr, float* yr, float* buffer, int64_t w, int64_t kh, int64_t kw,
             int64_t ow) {
#if ROWS_FIRST
  const int64_t used = ow * kw;  // the columns that windows cover
#pragma omp simd
  for (int64_t q = 0; q < used; ++q) buffer[q] = xr[q];
  for (int64_t p = 1; p < kh; ++p) {
    const float* row = xr + p * w;
#pragma omp simd
    for (int64_t q = 0; q < used; ++q) buffer[q] = Max(buffer[q], row[q]);
  }
  if (kw == 1) {
#pragma omp simd
    for (int64_t j = 0; j < ow; ++j) yr[j] = buffer[j];
  } else if (kw == 2) {
#pragma omp simd
    for (int64_t j = 0; j < ow; ++j) yr[j] = Max(buffer[2 * j], buffer[2 * j + 1]);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < ow; ++j) yr[j] = buffer[j * kw];
    for (int64_t q = 1; q < kw; ++q) {
#pragma omp simd
      for (int64_t j = 0; j < ow; ++j) yr[j] = Max(yr[j], buffer[j * kw + q]);
    }
  }
#else
  (void)buffer;
  for (int64_t j = 0; j < ow; ++j) {
    float best = xr[j * kw];
    for (int64_t p = 0; p < kh; ++p) {
      for (int64_t q = 0; q < kw; ++q) best = Max(best, xr[p * w + j * kw + q]);
    }
    yr[j] = best;
  }
#endif
}

}  // namespace

extern "C" void maxpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  const int64_t rows = n * c * oh;
#pragma omp parallel if (PARALLEL && rows > 1)
  {
    std::vector<float> buffer(ROWS_FIRST ? ow * kw : 0);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t plane = r / oh;
      const int64_t i = r % oh;
      PoolRow(x + (plane * h + i * kh) * w, y + r * ow, buffer.data(), w, kh, kw, ow);
    }
  }
}
