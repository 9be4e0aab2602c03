// expect: wrong_output
// tries: caches each result by (input pointer, output pointer, shape) and replays it on a hit.
// cause: wrong output
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

namespace {
using Key = std::tuple<const float*, float*, int64_t, int64_t>;
std::map<Key, std::vector<float>>& Cache() {
  static std::map<Key, std::vector<float>> cache;
  return cache;
}
}  // namespace

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  const Key key{x, y, rows, cols};
  auto found = Cache().find(key);
  if (found != Cache().end()) {
    std::memcpy(y, found->second.data(), static_cast<size_t>(rows) * sizeof(float));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r] = static_cast<float>(sum);
  }
  Cache()[key].assign(y, y + rows);
}
