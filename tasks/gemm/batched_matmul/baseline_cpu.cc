// oneDNN's batched (3-D) matmul on all cores, what PyTorch eager's CPU torch.bmm calls. The
// primitive is made once per shape (PyTorch caches it too), so a timed call pays for the multiply alone.
#include <cstdint>
#include <map>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void batched_matmul(const float* a, const float* b, float* c, int64_t batch, int64_t m,
                               int64_t n, int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, dnnl::matmul> primitives;
  const memory::desc a_desc({batch, m, k}, memory::data_type::f32, memory::format_tag::abc);
  const memory::desc b_desc({batch, k, n}, memory::data_type::f32, memory::format_tag::abc);
  const memory::desc c_desc({batch, m, n}, memory::data_type::f32, memory::format_tag::abc);
  auto found = primitives.find({batch, m, n, k});
  if (found == primitives.end()) {
    const dnnl::matmul::primitive_desc made(dnnl::matmul::desc(a_desc, b_desc, c_desc), engine);
    found = primitives.emplace(std::tuple{batch, m, n, k}, dnnl::matmul(made)).first;
  }
  memory a_memory(a_desc, engine, const_cast<float*>(a));
  memory b_memory(b_desc, engine, const_cast<float*>(b));
  memory c_memory(c_desc, engine, c);
  found->second.execute(stream, {{DNNL_ARG_SRC, a_memory}, {DNNL_ARG_WEIGHTS, b_memory}, {DNNL_ARG_DST, c_memory}});
  stream.wait();
}
