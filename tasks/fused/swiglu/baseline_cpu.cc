// CPU baseline: what `gate, up = x.chunk(2, -1); y = F.silu(gate) * up` costs in PyTorch eager on
// one thread, unfused: chunk makes two strided views (no copy), silu writes a contiguous
// [rows, cols] temporary, then the multiply reads it back with the up view. The temporary is kept
// between calls and grown only when too small, as PyTorch's allocator hands back a block it freed
// before.
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void swiglu(const float* x, float* y, int64_t rows, int64_t cols, int64_t two_cols) {
  const int64_t n = rows * cols;
  static thread_local std::vector<float> activated;
  if (static_cast<int64_t>(activated.size()) < n) activated.resize(n);
  float* a = activated.data();
  for (int64_t r = 0; r < rows; ++r) {  // silu(gate)
    const float* gate = x + r * two_cols;
    float* ar = a + r * cols;
    for (int64_t c = 0; c < cols; ++c) ar[c] = gate[c] / (1.0f + std::exp(-gate[c]));
  }
  for (int64_t r = 0; r < rows; ++r) {  // * up
    const float* up = x + r * two_cols + cols;
    const float* ar = a + r * cols;
    float* yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c) yr[c] = ar[c] * up[c];
  }
}
