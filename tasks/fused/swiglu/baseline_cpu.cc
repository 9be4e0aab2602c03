// PyTorch eager runs `gate, up = x.chunk(2, -1); y = F.silu(gate) * up` unfused: silu over the
// strided gate view, then the multiply by the up view, each a vectorized multi-threaded ATen loop
// (oneDNN's jit swish needs dense memory; on the strided gate it falls back to a scalar loop). silu
// writes y and the multiply updates it in place, the same traffic as eager's temporary. std::exp
// does not vectorize without -ffast-math, so exp is Cephes' expf polynomial (about 1 ulp, as ATen's
// Sleef exp), taken only of -|v| so it cannot overflow.
#include <bit>
#include <cmath>
#include <cstdint>

namespace {

// exp(-|v|) in (0, 1]; |v| is clamped to 87 on its bits (exp(-87) = 1.6e-38, so silu of v <= -87
// is v * 1.6e-38, far inside any fp32 tolerance of the exact -0).
#pragma omp declare simd notinbranch
inline float ExpNegAbs(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v) & 0x7fffffffu;
  const float a = std::bit_cast<float>(bits < 0x42ae0000u ? bits : 0x42ae0000u);
  const float fx = a * -1.44269504088896341f + 0.5f;  // k = floor(fx) = round(-a / ln 2)
  const float kt = static_cast<float>(static_cast<int>(fx));
  const float kf = kt - (kt > fx ? 1.0f : 0.0f);
  const int k = static_cast<int>(kf);
  const float r = (-a - kf * 0.693359375f) + kf * 2.12194440e-4f;  // -a - k ln 2, ln 2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  return p * std::bit_cast<float>((k + 127) << 23);
}

}  // namespace

extern "C" void swiglu(const float* x, float* y, int64_t rows, int64_t cols, int64_t two_cols) {
  const bool parallel = rows * cols > 32768;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {  // y = silu(gate)
    const float* gate = x + r * two_cols;
    float* yr = y + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      const float v = gate[c];
      const float e = ExpNegAbs(v);
      const float sigmoid = (v >= 0.0f ? 1.0f : e) / (1.0f + e);
      yr[c] = v * sigmoid;
    }
  }
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {  // y *= up
    const float* up = x + r * two_cols + cols;
    float* yr = y + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) yr[c] *= up[c];
  }
}
