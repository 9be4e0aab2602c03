// CPU baseline: the unfused sequence PyTorch eager runs for torch.softmax(q @ k.T / sqrt(d), -1) @ v
// (the math path of scaled_dot_product_attention): OpenBLAS sgemm writes the scaled scores
// q k^T / sqrt(d) into an [s, t] temporary (the scale folded into alpha), a plain single-threaded
// softmax (row max, exp-sum, divide) writes the weights into a second one, and sgemm multiplies
// them by v into o.
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void attention_head(const float* q, const float* k, const float* v, float* o, int64_t s,
                               int64_t t, int64_t d) {
  std::vector<float> scores(static_cast<size_t>(s * t));
  std::vector<float> p(static_cast<size_t>(s * t));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s), static_cast<int>(t),
              static_cast<int>(d), scale, q, static_cast<int>(d), k, static_cast<int>(d), 0.0f,
              scores.data(), static_cast<int>(t));
  for (int64_t i = 0; i < s; ++i) {
    const float* ai = scores.data() + i * t;
    float* pi = p.data() + i * t;
    float mx = ai[0];
    for (int64_t j = 1; j < t; ++j) mx = ai[j] > mx ? ai[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < t; ++j) {
      pi[j] = std::exp(ai[j] - mx);
      sum += pi[j];
    }
    for (int64_t j = 0; j < t; ++j) pi[j] /= sum;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s), static_cast<int>(d),
              static_cast<int>(t), 1.0f, p.data(), static_cast<int>(t), v, static_cast<int>(d), 0.0f, o,
              static_cast<int>(d));
}
