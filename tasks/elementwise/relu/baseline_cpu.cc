// oneDNN's ReLU (eltwise_relu, alpha = 0) on all cores, the library PyTorch's CPU backend builds
// on. The primitive is made once per length, so a timed call pays for the elementwise pass alone.
#include <cstdint>
#include <map>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void relu(const float* x, float* y, int64_t n) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<int64_t, dnnl::eltwise_forward> primitives;
  const memory::desc desc({n}, memory::data_type::f32, memory::format_tag::a);
  auto found = primitives.find(n);
  if (found == primitives.end()) {
    const dnnl::eltwise_forward::desc operation(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::eltwise_relu, desc, 0.0f, 0.0f);
    found = primitives.emplace(n, dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(operation, engine)))
                .first;
  }
  memory x_memory(desc, engine, const_cast<float*>(x));
  memory y_memory(desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
