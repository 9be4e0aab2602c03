// oneDNN's matmul on all cores, the library under PyTorch eager's CPU linear, with the bias and the
// ReLU as the matmul's bias argument and eltwise post-op (how oneDNN itself fuses linear + relu).
// The primitive is made once per shape, so a timed call pays for the computation alone.
#include <cstdint>
#include <map>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void linear_relu(const float* x, const float* w, const float* b, float* y, int64_t m,
                            int64_t n, int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, dnnl::matmul> primitives;
  const memory::desc x_desc({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc w_desc({k, n}, memory::data_type::f32, memory::format_tag::ba);  // w^T of [n, k]
  const memory::desc b_desc({1, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc y_desc({m, n}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({m, n, k});
  if (found == primitives.end()) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::primitive_desc made(dnnl::matmul::desc(x_desc, w_desc, b_desc, y_desc), attr, engine);
    found = primitives.emplace(std::tuple{m, n, k}, dnnl::matmul(made)).first;
  }
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory w_memory(w_desc, engine, const_cast<float*>(w));
  memory b_memory(b_desc, engine, const_cast<float*>(b));
  memory y_memory(y_desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory},
                                 {DNNL_ARG_WEIGHTS, w_memory},
                                 {DNNL_ARG_BIAS, b_memory},
                                 {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
