// oneDNN's GELU (erf form) backward on all cores, the library PyTorch's CPU backend builds on.
// The primitive is made once per length, so a timed call pays for the backward alone.
#include <cstdint>
#include <map>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<int64_t, dnnl::eltwise_backward> primitives;
  const memory::desc desc({n}, memory::data_type::f32, memory::format_tag::a);
  auto found = primitives.find(n);
  if (found == primitives.end()) {
    // The backward primitive descriptor takes the forward one as a hint.
    const dnnl::eltwise_forward::primitive_desc hint(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf, desc),
        engine);
    const dnnl::eltwise_backward::desc operation(dnnl::algorithm::eltwise_gelu_erf, desc, desc);
    found = primitives.emplace(n, dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(operation, engine, hint)))
                .first;
  }
  memory x_memory(desc, engine, const_cast<float*>(x));
  memory dy_memory(desc, engine, const_cast<float*>(dy));
  memory dx_memory(desc, engine, dx);
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_DIFF_DST, dy_memory}, {DNNL_ARG_DIFF_SRC, dx_memory}});
  stream.wait();
}
