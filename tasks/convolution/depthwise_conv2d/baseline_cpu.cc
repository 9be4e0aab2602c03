// PyTorch eager runs this through oneDNN, whose depthwise kernels want a blocked or channels-last
// layout: with NCHW in and out, the reorders around the (memory-bound) convolution cost more than
// it does (oneDNN with its own layout, or forced to nChw16c, was 2x to 10x slower than this loop on
// the bench shape), so a direct vectorized loop over the NCHW rows on all cores is the stronger
// baseline.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

typedef float Vec __attribute__((vector_size(64)));  // 16 floats: one zmm, or two ymm without AVX-512
constexpr int64_t kLanes = 16;

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The first len (<= 16) lanes of v (a masked store, not a libc call, where AVX-512 has one).
inline void StorePartial(float* p, Vec v, int64_t len) {
#ifdef __AVX512F__
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << len) - 1), reinterpret_cast<__m512>(v));
#else
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof v);
  for (int64_t u = 0; u < len; ++u) p[u] = lanes[u];
#endif
}

// R consecutive output rows of one plane, 32 then 16 outputs at a time, each accumulator held in a
// register across the whole window: y[q][j] = sum_{r, s} wp[r*kw + s] * xp[(q + r)*w + j + s],
// summed in (r, s) order in fp32; one weight load serves all R rows. The last, partial chunk of a
// row reads on into x's next row (its extra lanes are never stored); only where that would leave x
// does a plain loop take it.
template <int R>
void Rows(const float* xp, const float* x_end, const float* wp, float* yp, int64_t w, int64_t kh,
          int64_t kw, int64_t ow) {
  int64_t j = 0;
  for (; j + 2 * kLanes <= ow; j += 2 * kLanes) {
    Vec a[R] = {}, b[R] = {};
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t s = 0; s < kw; ++s) {
        const float wv = wp[r * kw + s];
        const float* src = xp + r * w + s + j;
        for (int q = 0; q < R; ++q) {
          a[q] += wv * Load(src + q * w);
          b[q] += wv * Load(src + q * w + kLanes);
        }
      }
    for (int q = 0; q < R; ++q) {
      std::memcpy(yp + q * ow + j, &a[q], sizeof(Vec));
      std::memcpy(yp + q * ow + j + kLanes, &b[q], sizeof(Vec));
    }
  }
  for (; j < ow; j += kLanes) {
    const int64_t len = std::min(kLanes, ow - j);
    if (len == kLanes || xp + (R - 1 + kh - 1) * w + (kw - 1) + j + kLanes <= x_end) {
      Vec a[R] = {};
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) {
          const float wv = wp[r * kw + s];
          const float* src = xp + r * w + s + j;
          for (int q = 0; q < R; ++q) a[q] += wv * Load(src + q * w);
        }
      for (int q = 0; q < R; ++q) StorePartial(yp + q * ow + j, a[q], len);
    } else {
      for (int q = 0; q < R; ++q) {
        float acc[kLanes] = {};
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            const float wv = wp[r * kw + s];
            const float* src = xp + (q + r) * w + s + j;
#pragma omp simd
            for (int64_t u = 0; u < len; ++u) acc[u] += wv * src[u];
          }
        std::memcpy(yp + q * ow + j, acc, len * sizeof(float));
      }
    }
  }
}

// The 3x3 window (the common case, and memory-bound): one output row per pass, the nine weights in
// registers and the window summed per lane in (r, s) order; faster here than Rows on large planes.
void Row3x3(const float* xp, const float* wp, float* yp, int64_t w, int64_t ow) {
  float wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = wp[t];
#pragma omp simd
  for (int64_t j = 0; j < ow; ++j) {
    float acc = 0.0f;
#pragma GCC unroll 9
    for (int r = 0; r < 3; ++r)
#pragma GCC unroll 3
      for (int s = 0; s < 3; ++s) acc += wv[r * 3 + s] * xp[r * w + j + s];
    yp[j] = acc;
  }
}

constexpr int64_t kBlock = 4;  // output rows per task

}  // namespace

extern "C" void depthwise_conv2d(const float* x, const float* wt, float* y, int64_t n, int64_t c,
                                 int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow) {
  const int64_t planes = n * c;
  const int64_t blocks = (oh + kBlock - 1) / kBlock;
  const float* x_end = x + planes * h * w;
#pragma omp parallel for collapse(2) schedule(static) if (planes * oh * ow * kh * kw > 65536)
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t block = 0; block < blocks; ++block) {
      const float* wp = wt + (plane % c) * kh * kw;
      const int64_t i0 = block * kBlock;
      const float* xp = x + (plane * h + i0) * w;
      float* yp = y + (plane * oh + i0) * ow;
      if (kh == 3 && kw == 3) {
        for (int64_t i = i0; i < std::min(oh, i0 + kBlock); ++i)
          Row3x3(xp + (i - i0) * w, wp, yp + (i - i0) * ow, w, ow);
      } else if (i0 + kBlock <= oh) {
        Rows<kBlock>(xp, x_end, wp, yp, w, kh, kw, ow);
      } else {
        for (int64_t i = i0; i < oh; ++i) Rows<1>(xp + (i - i0) * w, x_end, wp, yp + (i - i0) * ow, w, kh, kw, ow);
      }
    }
}
