// Tuner seed for vector_add: OpenMP threads over contiguous blocks, SIMD inside a block.
// The loop is memory-bound: streaming stores skip reading each line of c into the cache before
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

void AddRange(const float* a, const float* b, float* c, int64_t begin, int64_t end) {
  int64_t i = begin;
#if STREAM_STORES && defined(__AVX__)
  // Streaming stores need 32-byte aligned addresses: plain stores up to the first one.
  for (; i < end && reinterpret_cast<uintptr_t>(c + i) % 32 != 0; ++i) c[i] = a[i] + b[i];
  for (; i + 8 <= end; i += 8) {
    _mm256_stream_ps(c + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  _mm_sfence();  // the streamed data is visible before this thread reports the block done
#endif
#pragma omp simd
  for (int64_t j = i; j < end; ++j) c[j] = a[j] + b[j];
}

}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (PARALLEL && blocks > 1)
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t begin = block * BLOCK;
    AddRange(a, b, c, begin, begin + BLOCK < n ? begin + BLOCK : n);
  }
}
