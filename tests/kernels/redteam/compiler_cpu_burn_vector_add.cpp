// expect: compile_error
// tries: keeps the compiler busy: 900 separate constant evaluations, each a loop just under GCC's
// per-evaluation limits (-fconstexpr-loop-limit, -fconstexpr-ops-limit), so no limit of the
// compiler's own stops them; hours of CPU. The build's CPU time limit, set low here so that the
// test is quick, stops it (its memory grows slowly: about 100 MB by then).
// cause: cpu time limit of 3 s
// args: --build-cpu-s 3
#include <cstdint>

constexpr uint64_t Spin(uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

template <int Level>
struct Burn {
  static constexpr uint64_t value = Spin(Level) ^ Burn<Level - 1>::value;
};

template <>
struct Burn<0> {
  static constexpr uint64_t value = 0;
};

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i] + static_cast<float>(Burn<900>::value & 0);
}
