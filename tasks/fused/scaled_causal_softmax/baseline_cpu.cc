// PyTorch eager runs `softmax((x * 0.125).masked_fill_(mask, -inf), -1)` unfused: a vectorized
// multi-threaded scale writes a temporary, the masked fill sets its entries after the diagonal to
// -inf in place (tested as j > i rather than read from a bool mask tensor, which spares the
// baseline that read), then a softmax runs over every full row, masked entries included; here the
// softmax is oneDNN's. The temporary is kept and grown only when too small (PyTorch's allocator
// reuses a freed block), and the primitive is made once per shape.
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void scaled_causal_softmax(const float* x, float* y, int64_t heads, int64_t s) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::pair<int64_t, int64_t>, dnnl::softmax_v2_forward> primitives;
  static thread_local std::vector<float> scores;
  const int64_t rows = heads * s;
  const int64_t n = rows * s;
  if (static_cast<int64_t>(scores.size()) < n) scores.resize(n);
  float* t = scores.data();
#pragma omp parallel for simd schedule(static) if (n > 32768)
  for (int64_t k = 0; k < n; ++k) t[k] = x[k] * 0.125f;
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t row = 0; row < rows; ++row) {
    float* tr = t + row * s;
#pragma omp simd
    for (int64_t j = row % s + 1; j < s; ++j) tr[j] = -INFINITY;
  }

  const memory::desc desc({rows, s}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({rows, s});
  if (found == primitives.end()) {
    const dnnl::softmax_v2_forward::desc operation(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::softmax_accurate, desc, desc, 1);
    found = primitives
                .emplace(std::pair{rows, s},
                         dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(operation, engine)))
                .first;
  }
  memory t_memory(desc, engine, t);
  memory y_memory(desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, t_memory}, {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
