// PyTorch eager on a CPU without native half GEMM: a and b widened to fp32 (in parallel), oneDNN's
// fp32 matmul on all cores (fp32 accumulation), the result rounded once to fp16. The primitive and
// the fp32 buffers are made once (the buffers grow to the largest shape), so a timed call pays for
// the conversions and the multiply.
#include <immintrin.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

// Elementwise conversions on all cores, skipping the thread team for small arrays. g++ 12 does
// not vectorize _Float16 casts, so the F16C instructions are called by name (round to nearest even,
// as the cast does).
void Widen(const _Float16* from, float* to, int64_t count) {
  const int64_t body = count / 8 * 8;
#ifdef __F16C__
#pragma omp parallel for schedule(static) if (count > 32768)
  for (int64_t i = 0; i < body; i += 8)
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i))));
#else
  for (int64_t i = 0; i < body; ++i) to[i] = static_cast<float>(from[i]);
#endif
  for (int64_t i = body; i < count; ++i) to[i] = static_cast<float>(from[i]);
}

void Narrow(const float* from, _Float16* to, int64_t count) {
  const int64_t body = count / 8 * 8;
#ifdef __F16C__
#pragma omp parallel for schedule(static) if (count > 32768)
  for (int64_t i = 0; i < body; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  for (int64_t i = 0; i < body; ++i) to[i] = static_cast<_Float16>(from[i]);
#endif
  for (int64_t i = body; i < count; ++i) to[i] = static_cast<_Float16>(from[i]);
}

}  // namespace

extern "C" void matmul_fp16(const _Float16* a, const _Float16* b, _Float16* c, int64_t m, int64_t n,
                            int64_t k) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  static std::map<std::tuple<int64_t, int64_t, int64_t>, dnnl::matmul> primitives;
  static std::vector<float> a32, b32, c32;
  const memory::desc a_desc({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_desc({k, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc c_desc({m, n}, memory::data_type::f32, memory::format_tag::ab);
  auto found = primitives.find({m, n, k});
  if (found == primitives.end()) {
    const dnnl::matmul::primitive_desc made(dnnl::matmul::desc(a_desc, b_desc, c_desc), engine);
    found = primitives.emplace(std::tuple{m, n, k}, dnnl::matmul(made)).first;
  }
  if (a32.size() < static_cast<size_t>(m * k)) a32.resize(m * k);
  if (b32.size() < static_cast<size_t>(k * n)) b32.resize(k * n);
  if (c32.size() < static_cast<size_t>(m * n)) c32.resize(m * n);
  Widen(a, a32.data(), m * k);
  Widen(b, b32.data(), k * n);
  memory a_memory(a_desc, engine, a32.data());
  memory b_memory(b_desc, engine, b32.data());
  memory c_memory(c_desc, engine, c32.data());
  found->second.execute(stream, {{DNNL_ARG_SRC, a_memory}, {DNNL_ARG_WEIGHTS, b_memory}, {DNNL_ARG_DST, c_memory}});
  stream.wait();
  Narrow(c32.data(), c, m * n);
}
