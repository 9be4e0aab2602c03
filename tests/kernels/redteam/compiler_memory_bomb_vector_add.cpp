// expect: compile_error
// tries: branching template recursion: every level instantiates two new children, so the compiler
// must hold 2^30 instantiations (g++ grew to 10.8 GB in 120 s before builds had a memory limit).
// The build's memory limit, set low here so that the test is quick, stops it.
// cause: memory limit of 512 MiB
// args: --build-memory-gib 0.5
#include <cstdint>

template <int Depth, uint64_t Key>
struct Grow {
  static constexpr uint64_t value = Grow<Depth - 1, 2 * Key>::value + Grow<Depth - 1, 2 * Key + 1>::value;
};

template <uint64_t Key>
struct Grow<0, Key> {
  static constexpr uint64_t value = Key;
};

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i] + static_cast<float>(Grow<30, 1>::value & 0);
}
