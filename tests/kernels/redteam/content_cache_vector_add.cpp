// expect: integrity_violation
// tries: caches results keyed on n and 8 sampled input elements; computes honestly on a miss,
// replays the cached output on a hit (the timing loop changes only a few elements per round).
// cause: timed call
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

namespace {
struct Key {
  int64_t n;
  float samples[16];
  bool operator<(const Key& other) const {
    if (n != other.n) return n < other.n;
    return std::memcmp(samples, other.samples, sizeof(samples)) < 0;
  }
};
std::map<Key, std::vector<float>>& Cache() {
  static std::map<Key, std::vector<float>> cache;
  return cache;
}
}  // namespace

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  Key key{};
  key.n = n;
  for (int s = 0; s < 8; ++s) {
    const int64_t at = (n - 1) * s / 7;
    key.samples[2 * s] = a[at];
    key.samples[2 * s + 1] = b[at];
  }
  auto found = Cache().find(key);
  if (found != Cache().end()) {
    std::memcpy(c, found->second.data(), static_cast<size_t>(n) * sizeof(float));
    return;
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  if (Cache().size() > 16) Cache().clear();
  Cache()[key].assign(c, c + n);
}
