// oneDNN's convolution on all cores, what PyTorch eager's CPU conv2d calls (through ideep), with the
// bias as its bias argument and the ReLU as an eltwise post-op. As ideep does, the convolution picks
// its own (blocked) layouts and the NCHW input, weights and output are reordered to and from them
// on every call; the primitives and the blocked buffers are made once per shape.
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

struct Plan {
  dnnl::convolution_forward conv;
  std::optional<dnnl::reorder> to_src, to_weights, from_dst;  // absent where the layout is NCHW's own
  dnnl::memory src, weights, dst;                             // the convolution's buffers
};

}  // namespace

extern "C" void conv2d_bias_relu(const float* x, const float* wt, const float* b, float* y, int64_t n,
                                 int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw,
                                 int64_t oh, int64_t ow) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>, Plan> plans;
  const memory::desc x_desc({n, cin, h, w}, memory::data_type::f32, memory::format_tag::nchw);
  const memory::desc w_desc({cout, cin, kh, kw}, memory::data_type::f32, memory::format_tag::oihw);
  const memory::desc b_desc({cout}, memory::data_type::f32, memory::format_tag::x);
  const memory::desc y_desc({n, cout, oh, ow}, memory::data_type::f32, memory::format_tag::nchw);
  memory x_memory(x_desc, engine, const_cast<float*>(x));
  memory w_memory(w_desc, engine, const_cast<float*>(wt));
  memory b_memory(b_desc, engine, const_cast<float*>(b));
  memory y_memory(y_desc, engine, y);
  const auto key = std::tuple{n, cin, h, w, cout, kh, kw};
  auto found = plans.find(key);
  if (found == plans.end()) {
    const auto any = memory::format_tag::any;
    const dnnl::convolution_forward::desc operation(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc({n, cin, h, w}, memory::data_type::f32, any),
        memory::desc({cout, cin, kh, kw}, memory::data_type::f32, any), b_desc,
        memory::desc({n, cout, oh, ow}, memory::data_type::f32, any), {1, 1}, {0, 0}, {0, 0});
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::convolution_forward::primitive_desc made(operation, attr, engine);
    Plan plan{dnnl::convolution_forward(made), {}, {}, {}, {}, {}, {}};
    if (made.src_desc() != x_desc) {
      plan.src = memory(made.src_desc(), engine);
      plan.to_src = dnnl::reorder(x_memory, plan.src);
    }
    if (made.weights_desc() != w_desc) {
      plan.weights = memory(made.weights_desc(), engine);
      plan.to_weights = dnnl::reorder(w_memory, plan.weights);
    }
    if (made.dst_desc() != y_desc) {
      plan.dst = memory(made.dst_desc(), engine);
      plan.from_dst = dnnl::reorder(plan.dst, y_memory);
    }
    found = plans.emplace(key, std::move(plan)).first;
  }
  Plan& plan = found->second;
  const memory& src = plan.to_src ? plan.src : x_memory;
  const memory& weights = plan.to_weights ? plan.weights : w_memory;
  const memory& dst = plan.from_dst ? plan.dst : y_memory;
  if (plan.to_src) plan.to_src->execute(stream, {{DNNL_ARG_FROM, x_memory}, {DNNL_ARG_TO, src}});
  if (plan.to_weights) plan.to_weights->execute(stream, {{DNNL_ARG_FROM, w_memory}, {DNNL_ARG_TO, weights}});
  plan.conv.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, b_memory},
                             {DNNL_ARG_DST, dst}});
  if (plan.from_dst) plan.from_dst->execute(stream, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, y_memory}});
  stream.wait();
}
