// Tuner seed for relu: OpenMP threads over contiguous blocks, SIMD inside a block.
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

void ReluRange(const float* x, float* y, int64_t begin, int64_t end) {
  int64_t i = begin;
#if STREAM_STORES && defined(__AVX__)
  // Streaming stores need 32-byte aligned addresses: plain stores up to the first one.
  for (; i < end && reinterpret_cast<uintptr_t>(y + i) % 32 != 0; ++i) {
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
  const __m256 zero = _mm256_setzero_ps();
  for (; i + 8 <= end; i += 8) _mm256_stream_ps(y + i, _mm256_max_ps(_mm256_loadu_ps(x + i), zero));
  _mm_sfence();  // the streamed data is visible before this thread reports the block done
#endif
#pragma omp simd
  for (int64_t j = i; j < end; ++j) y[j] = x[j] > 0.0f ? x[j] : 0.0f;
}

}  // namespace

extern "C" void relu(const float* x, float* y, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    ReluRange(x, y, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
