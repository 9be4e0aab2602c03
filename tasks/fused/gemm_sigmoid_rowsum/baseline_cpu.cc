// What PyTorch eager runs for torch.sigmoid(x @ w.T).sum(dim=1): oneDNN's matmul on all cores, with
// the sigmoid as its eltwise post-op, into a temporary; then the row sums, a reduction oneDNN's
// matmul cannot express, as a vectorized OpenMP loop like ATen's sum kernel. The primitive is made
// once per shape and the temporary kept, so a timed call pays for the computation alone.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void gemm_sigmoid_rowsum(const float* x, const float* w, float* y, int64_t m, int64_t n,
                                    int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, dnnl::matmul> primitives;
  static std::vector<float> z;
  if (z.size() < static_cast<size_t>(m * n)) z.resize(static_cast<size_t>(m * n));
  const memory::desc x_desc({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc w_desc({k, n}, memory::data_type::f32, memory::format_tag::ba);  // w^T of [n, k]
  const memory::desc z_desc({m, n}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({m, n, k});
  if (found == primitives.end()) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::primitive_desc made(dnnl::matmul::desc(x_desc, w_desc, z_desc), attr, engine);
    found = primitives.emplace(std::tuple{m, n, k}, dnnl::matmul(made)).first;
  }
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory w_memory(w_desc, engine, const_cast<float*>(w));
  memory z_memory(z_desc, engine, z.data());
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_WEIGHTS, w_memory}, {DNNL_ARG_DST, z_memory}});
  stream.wait();
  const float* sig = z.data();
#pragma omp parallel for schedule(static) if (m * n > 32768)
  for (int64_t i = 0; i < m; ++i) {
    const float* row = sig + i * n;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += row[j];
    y[i] = sum;
  }
}
