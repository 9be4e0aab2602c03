// oneDNN's inner product on all cores, its GEMV path (a is the [m, k] weights, x a batch of one),
// as fast here as OpenBLAS's sgemv under PyTorch eager's CPU torch.mv; oneDNN's matmul with a
// one-column operand is slower. The primitive is made once per shape, so a timed call pays for the
// product alone.
#include <cstdint>
#include <map>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void matvec(const float* a, const float* x, float* y, int64_t m, int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::pair<int64_t, int64_t>, dnnl::inner_product_forward> primitives;
  const memory::desc x_desc({1, k}, memory::data_type::f32, memory::format_tag::nc);
  const memory::desc a_desc({m, k}, memory::data_type::f32, memory::format_tag::oi);
  const memory::desc y_desc({1, m}, memory::data_type::f32, memory::format_tag::nc);
  auto found = primitives.find({m, k});
  if (found == primitives.end()) {
    const dnnl::inner_product_forward::desc operation(dnnl::prop_kind::forward_inference, x_desc, a_desc, y_desc);
    found = primitives
                .emplace(std::pair{m, k},
                         dnnl::inner_product_forward(dnnl::inner_product_forward::primitive_desc(operation, engine)))
                .first;
  }
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory a_memory(a_desc, engine, const_cast<float*>(a));
  memory y_memory(y_desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_WEIGHTS, a_memory}, {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
