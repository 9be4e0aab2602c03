// oneDNN's softmax backward over the last axis on all cores, the library PyTorch's CPU backend
// builds on. The primitive is made once per shape, so a timed call pays for the backward alone.
#include <cstdint>
#include <map>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows,
                                 int64_t cols) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::pair<int64_t, int64_t>, dnnl::softmax_v2_backward> primitives;
  const memory::desc desc({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({rows, cols});
  if (found == primitives.end()) {
    // The backward primitive descriptor takes the forward one as a hint.
    const dnnl::softmax_v2_forward::primitive_desc hint(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::softmax_accurate,
                                       desc, desc, 1),
        engine);
    const dnnl::softmax_v2_backward::desc operation(dnnl::algorithm::softmax_accurate, desc, desc, desc, 1);
    found = primitives.emplace(std::pair{rows, cols},
                               dnnl::softmax_v2_backward(dnnl::softmax_v2_backward::primitive_desc(operation, engine, hint)))
                .first;
  }
  memory y_memory(desc, engine, const_cast<float*>(y));
  memory dy_memory(desc, engine, const_cast<float*>(dy));
  memory dx_memory(desc, engine, dx);
  found->second.execute(stream, {{DNNL_ARG_DST, y_memory}, {DNNL_ARG_DIFF_DST, dy_memory}, {DNNL_ARG_DIFF_SRC, dx_memory}});
  stream.wait();
}
