// oneDNN's matmul on all cores, what PyTorch eager's CPU mm backward calls: one matmul per
// gradient, the transposed operand given as a column-major view (format_tag::ba) rather than a
// copy. The primitives are made once per shape, so a timed call pays for the two multiplies alone.
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

extern "C" void matmul_backward(const float* a, const float* b, const float* dc, float* da, float* db,
                                int64_t m, int64_t n, int64_t k) {
  using dnnl::memory;
  using tag = memory::format_tag;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<dnnl::matmul, dnnl::matmul>> primitives;
  const auto f32 = memory::data_type::f32;
  // da [m, k] = dc [m, n] @ b^T, with b^T [n, k] read from b [k, n] row-major.
  const memory::desc dc_desc({m, n}, f32, tag::ab);
  const memory::desc bt_desc({n, k}, f32, tag::ba);
  const memory::desc da_desc({m, k}, f32, tag::ab);
  // db [k, n] = a^T @ dc, with a^T [k, m] read from a [m, k] row-major.
  const memory::desc at_desc({k, m}, f32, tag::ba);
  const memory::desc db_desc({k, n}, f32, tag::ab);
  auto found = primitives.find({m, n, k});
  if (found == primitives.end()) {
    const dnnl::matmul::primitive_desc da_made(dnnl::matmul::desc(dc_desc, bt_desc, da_desc), engine);
    const dnnl::matmul::primitive_desc db_made(dnnl::matmul::desc(at_desc, dc_desc, db_desc), engine);
    found = primitives.emplace(std::tuple{m, n, k}, std::pair{dnnl::matmul(da_made), dnnl::matmul(db_made)}).first;
  }
  memory dc_memory(dc_desc, engine, const_cast<float*>(dc));
  memory bt_memory(bt_desc, engine, const_cast<float*>(b));
  memory da_memory(da_desc, engine, da);
  memory at_memory(at_desc, engine, const_cast<float*>(a));
  memory db_memory(db_desc, engine, db);
  found->second.first.execute(stream, {{DNNL_ARG_SRC, dc_memory}, {DNNL_ARG_WEIGHTS, bt_memory}, {DNNL_ARG_DST, da_memory}});
  found->second.second.execute(stream, {{DNNL_ARG_SRC, at_memory}, {DNNL_ARG_WEIGHTS, dc_memory}, {DNNL_ARG_DST, db_memory}});
  stream.wait();
}
