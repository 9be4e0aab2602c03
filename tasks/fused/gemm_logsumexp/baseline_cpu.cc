// What PyTorch eager runs for torch.logsumexp(linear(x, w, b), 1): oneDNN's matmul on all cores,
// with the bias as its bias argument, into a temporary; then logsumexp (row max, sum of
// exp(z - max), log + max), which oneDNN has no primitive for, as a vectorized OpenMP loop like
// ATen's kernels. std::exp does not vectorize without -ffast-math, so exp is a polynomial (as
// ATen's vectorized exp is). The primitive is made once per shape and the temporary kept, so a
// timed call pays for the computation alone.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

// exp(v) for v <= 0 (z - max always is): range reduction by ln 2 and a degree-7 Taylor series,
// relative error about 1e-7; below -87 it returns about 1e-38, which no sum of terms >= 1 can see.
#pragma omp declare simd
inline float NonPositiveExp(float v) {
  const float x = v < -87.0f ? -87.0f : v;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;  // ln 2 in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) * (1 << 23);  // 2^n as a float
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace

extern "C" void gemm_logsumexp(const float* x, const float* w, const float* b, float* y, int64_t m,
                               int64_t n, int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, dnnl::matmul> primitives;
  static std::vector<float> z;
  if (z.size() < static_cast<size_t>(m * n)) z.resize(static_cast<size_t>(m * n));
  const memory::desc x_desc({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc w_desc({k, n}, memory::data_type::f32, memory::format_tag::ba);  // w^T of [n, k]
  const memory::desc b_desc({1, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc z_desc({m, n}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({m, n, k});
  if (found == primitives.end()) {
    const dnnl::matmul::primitive_desc made(dnnl::matmul::desc(x_desc, w_desc, b_desc, z_desc), engine);
    found = primitives.emplace(std::tuple{m, n, k}, dnnl::matmul(made)).first;
  }
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory w_memory(w_desc, engine, const_cast<float*>(w));
  memory b_memory(b_desc, engine, const_cast<float*>(b));
  memory z_memory(z_desc, engine, z.data());
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory},
                                 {DNNL_ARG_WEIGHTS, w_memory},
                                 {DNNL_ARG_BIAS, b_memory},
                                 {DNNL_ARG_DST, z_memory}});
  stream.wait();
  const float* zs = z.data();
#pragma omp parallel for schedule(static) if (m * n > 32768)
  for (int64_t i = 0; i < m; ++i) {
    const float* row = zs + i * n;
    float mx = row[0];
#pragma omp simd reduction(max : mx)
    for (int64_t j = 1; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
    float sum = 0.0f;
    if (std::isfinite(mx)) {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < n; ++j) sum += NonPositiveExp(row[j] - mx);
    } else {
      mx = 0.0f;  // logsumexp's masked_fill of an infinite maximum
      for (int64_t j = 0; j < n; ++j) sum += std::exp(row[j]);
    }
    y[i] = std::log(sum) + mx;
  }
}
