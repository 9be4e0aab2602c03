// oneDNN's average pooling on all cores, the library PyTorch's CPU backend builds on (no padding
// here, so include_padding divides by kh * kw). The primitive is made once per shape, so a timed
// call pays for the pooling alone.
#include <cstdint>
#include <map>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void avgpool2d(const float* x, float* y, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t kh, int64_t kw, int64_t oh, int64_t ow) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>, dnnl::pooling_v2_forward>
      primitives;
  const memory::desc x_desc({n, c, h, w}, memory::data_type::f32, memory::format_tag::nchw);
  const memory::desc y_desc({n, c, oh, ow}, memory::data_type::f32, memory::format_tag::nchw);
  auto found = primitives.find({n, c, h, w, kh, kw});
  if (found == primitives.end()) {
    // Stride = window, no padding: oneDNN's output size (h - kh) / kh + 1 is floor(h / kh).
    const dnnl::pooling_v2_forward::desc operation(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::pooling_avg_include_padding, x_desc, y_desc, {kh, kw},
                                                   {kh, kw}, {0, 0}, {0, 0}, {0, 0});
    found = primitives
                .emplace(std::tuple{n, c, h, w, kh, kw},
                         dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(operation, engine)))
                .first;
  }
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory y_memory(y_desc, engine, y);
  found->second.execute(stream, {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_DST, y_memory}});
  stream.wait();
}
