// oneDNN's direct convolution on all cores, as PyTorch eager's CPU conv1d (mkldnn backend) runs it:
// oneDNN picks its own layouts (channels-last on this CPU), and the NCW input, OIW weights and
// output are reordered into and out of them on every call (the weights may change between calls).
// The primitives and the reordered buffers are made once per shape, so a timed call pays for the
// reorders and the convolution.
#include <cstdint>
#include <map>
#include <tuple>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

using dnnl::memory;

// One tensor in the caller's plain layout and, where oneDNN wants another, its buffer in that one.
struct Operand {
  memory::desc plain;
  memory inner;            // empty when the primitive takes the plain layout itself
  dnnl::reorder convert;   // plain -> inner for inputs, inner -> plain for the output
};

struct Plan {
  dnnl::convolution_forward conv;
  Operand x, w, y;
};

Operand MakeOperand(const dnnl::engine& engine, const memory::desc& plain, const memory::desc& wanted,
                    bool output) {
  Operand operand{plain, {}, {}};
  if (wanted != plain) {
    operand.inner = memory(wanted, engine);
    operand.convert = output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, wanted, engine, plain))
                             : dnnl::reorder(dnnl::reorder::primitive_desc(engine, plain, engine, wanted));
  }
  return operand;
}

}  // namespace

extern "C" void conv1d(const float* x, const float* w, float* y, int64_t n, int64_t cin, int64_t l,
                       int64_t cout, int64_t kw, int64_t lo) {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>, Plan> plans;
  const auto key = std::tuple{n, cin, l, cout, kw};
  auto found = plans.find(key);
  if (found == plans.end()) {
    const auto f32 = memory::data_type::f32;
    const memory::desc x_plain({n, cin, l}, f32, memory::format_tag::ncw);
    const memory::desc w_plain({cout, cin, kw}, f32, memory::format_tag::oiw);
    const memory::desc y_plain({n, cout, lo}, f32, memory::format_tag::ncw);
    const dnnl::convolution_forward::desc operation(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        memory::desc({n, cin, l}, f32, memory::format_tag::any),
        memory::desc({cout, cin, kw}, f32, memory::format_tag::any),
        memory::desc({n, cout, lo}, f32, memory::format_tag::any), {1}, {0}, {0});
    const dnnl::convolution_forward::primitive_desc made(operation, engine);
    Plan plan{dnnl::convolution_forward(made), MakeOperand(engine, x_plain, made.src_desc(), false),
              MakeOperand(engine, w_plain, made.weights_desc(), false),
              MakeOperand(engine, y_plain, made.dst_desc(), true)};
    found = plans.emplace(key, std::move(plan)).first;
  }
  Plan& plan = found->second;
  memory x_memory(plan.x.plain, engine, const_cast<float*>(x));
  memory w_memory(plan.w.plain, engine, const_cast<float*>(w));
  memory y_memory(plan.y.plain, engine, y);
  if (plan.x.inner) plan.x.convert.execute(stream, x_memory, plan.x.inner);
  if (plan.w.inner) plan.w.convert.execute(stream, w_memory, plan.w.inner);
  plan.conv.execute(stream, {{DNNL_ARG_SRC, plan.x.inner ? plan.x.inner : x_memory},
                             {DNNL_ARG_WEIGHTS, plan.w.inner ? plan.w.inner : w_memory},
                             {DNNL_ARG_DST, plan.y.inner ? plan.y.inner : y_memory}});
  if (plan.y.inner) plan.y.convert.execute(stream, plan.y.inner, y_memory);
  stream.wait();
}
