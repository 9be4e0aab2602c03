// PyTorch eager runs `F.silu(F.group_norm(x, g, ...))` unfused. oneDNN (2.6) has no group norm, so
// that is a vectorized OpenMP pass as ATen's kernel (groups shared out over all cores; two-pass
// mean and variance with lane-wise partial sums, then the per-channel affine normalization),
// written to y; then silu is oneDNN's swish (alpha 1) over y in place, the same traffic as eager's
// silu from a temporary. The primitive is made once per size.
#include <cmath>
#include <cstdint>
#include <map>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void groupnorm_silu(const float* x, const float* weight, const float* bias, float* y,
                               int64_t n, int64_t g, int64_t cpg, int64_t hw, int64_t c) {
  const int64_t size = cpg * hw;
  const int64_t count = n * c * hw;
#pragma omp parallel for schedule(static) if (count > 32768)
  for (int64_t group = 0; group < n * g; ++group) {
    const int64_t b = group / g;
    const int64_t k = group % g;
    const float* xg = x + (b * c + k * cpg) * hw;
    float* yg = y + (b * c + k * cpg) * hw;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t e = 0; e < size; ++e) sum += xg[e];
    const float mean = sum / static_cast<float>(size);
    float var = 0.0f;
#pragma omp simd reduction(+ : var)
    for (int64_t e = 0; e < size; ++e) var += (xg[e] - mean) * (xg[e] - mean);
    var /= static_cast<float>(size);
    const float inv = 1.0f / std::sqrt(var + 1e-5f);
    for (int64_t j = 0; j < cpg; ++j) {
      const float scale = inv * weight[k * cpg + j];
      const float shift = bias[k * cpg + j];
      const float* xc = xg + j * hw;
      float* yc = yg + j * hw;
#pragma omp simd
      for (int64_t s = 0; s < hw; ++s) yc[s] = (xc[s] - mean) * scale + shift;
    }
  }

  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<int64_t, dnnl::eltwise_forward> primitives;
  const memory::desc desc({count}, memory::data_type::f32, memory::format_tag::a);
  auto found = primitives.find(count);
  if (found == primitives.end()) {
    const dnnl::eltwise_forward::desc operation(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::eltwise_swish, desc, 1.0f, 0.0f);
    found = primitives
                .emplace(count, dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(operation, engine)))
                .first;
  }
  memory y_memory(desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, y_memory}, {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
