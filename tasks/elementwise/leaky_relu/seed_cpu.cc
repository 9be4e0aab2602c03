// Tuner seed for leaky_relu: OpenMP threads over contiguous blocks, SIMD inside a block.
// The loop is memory-bound: streaming stores skip reading each line of y into the cache before
// it is overwritten, a third less traffic when the arrays do not fit in the cache.
#include <cstdint>

#include <immintrin.h>

// @tune PARALLEL: 1, 0
#ifndef PARALLEL
#define PARALLEL 1
#endif

// @tune STREAM_STORES: 0, 1
#ifndef STREAM_STORES
#define STREAM_STORES 0
#endif

// @tune BLOCK: 16384, 262144
#ifndef BLOCK
#define BLOCK 262144
#endif

namespace {

constexpr float kSlope = 0.01f;

void LeakyReluRange(const float* x, float* y, int64_t begin, int64_t end) {
  int64_t i = begin;
#if STREAM_STORES && defined(__AVX__)
  // Streaming stores need 32-byte aligned addresses: plain stores up to the first one.
  for (; i < end && reinterpret_cast<uintptr_t>(y + i) % 32 != 0; ++i) {
    y[i] = x[i] > 0.0f ? x[i] : kSlope * x[i];
  }
  // max(x, 0.01 x) is x for x > 0 and 0.01 x otherwise, the same floats as the select below.
  const __m256 slope = _mm256_set1_ps(kSlope);
  for (; i + 8 <= end; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    _mm256_stream_ps(y + i, _mm256_max_ps(v, _mm256_mul_ps(v, slope)));
  }
  _mm_sfence();  // the streamed data is visible before this thread reports the block done
#endif
#pragma omp simd
  for (int64_t j = i; j < end; ++j) y[j] = x[j] > 0.0f ? x[j] : kSlope * x[j];
}

}  // namespace

extern "C" void leaky_relu(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    LeakyReluRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
