// What torch.cumsum(x, dim=-1) costs on a CPU in PyTorch eager (cumsum_cpu_kernel): a running sum
// along each row in at::acc_type<float, /*is_cuda=*/false>, which is double, each prefix rounded
// to float as it is stored. Plain single-threaded loops.
#include <cstdint>

extern "C" void cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      sum += xr[c];
      yr[c] = static_cast<float>(sum);
    }
  }
}
