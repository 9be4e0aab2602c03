// What PyTorch eager runs for torch.softmax(q @ k.T / sqrt(d), -1) @ v, on oneDNN on all cores: a
// matmul writes the scores into a temporary (the 1 / sqrt(d) as its output scale, as a GEMM's
// alpha), oneDNN's softmax turns them into weights in place, and a second matmul multiplies them
// by v. The primitives are made once per shape and the temporary kept, so a timed call pays for
// the computation alone.
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

struct Plan {
  dnnl::matmul scores;
  dnnl::softmax_v2_forward softmax;
  dnnl::matmul output;
};

}  // namespace

extern "C" void attention_head(const float* q, const float* k, const float* v, float* o, int64_t s,
                               int64_t t, int64_t d) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, Plan> plans;
  static std::vector<float> p;
  if (p.size() < static_cast<size_t>(s * t)) p.resize(static_cast<size_t>(s * t));
  const memory::desc q_desc({s, d}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc kt_desc({d, t}, memory::data_type::f32, memory::format_tag::ba);  // k^T of [t, d]
  const memory::desc v_desc({t, d}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc p_desc({s, t}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc o_desc({s, d}, memory::data_type::f32, memory::format_tag::ab);
  auto found = plans.find({s, t, d});
  if (found == plans.end()) {
    dnnl::primitive_attr scaled;
    scaled.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(d))});
    const dnnl::matmul::primitive_desc scores(dnnl::matmul::desc(q_desc, kt_desc, p_desc), scaled, engine);
    const dnnl::softmax_v2_forward::desc softmax(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::softmax_accurate, p_desc, p_desc, 1);
    const dnnl::matmul::primitive_desc output(dnnl::matmul::desc(p_desc, v_desc, o_desc), engine);
    found = plans
                .emplace(std::tuple{s, t, d},
                         Plan{dnnl::matmul(scores),
                              dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(softmax, engine)),
                              dnnl::matmul(output)})
                .first;
  }
  memory q_memory(q_desc, engine, const_cast<float*>(q));
  memory kt_memory(kt_desc, engine, const_cast<float*>(k));
  memory v_memory(v_desc, engine, const_cast<float*>(v));
  memory p_memory(p_desc, engine, p.data());
  memory o_memory(o_desc, engine, o);
  Plan& plan = found->second;
  plan.scores.execute(stream, {{DNNL_ARG_SRC, q_memory}, {DNNL_ARG_WEIGHTS, kt_memory}, {DNNL_ARG_DST, p_memory}});
  plan.softmax.execute(stream, {{DNNL_ARG_SRC, p_memory}, {DNNL_ARG_DST, p_memory}});
  plan.output.execute(stream, {{DNNL_ARG_SRC, p_memory}, {DNNL_ARG_WEIGHTS, v_memory}, {DNNL_ARG_DST, o_memory}});
  stream.wait();
}
