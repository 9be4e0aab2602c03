// oneDNN has no prefix sum; this is PyTorch eager's cumsum_cpu_kernel: rows spread over all
// cores, a running sum along each row in at::acc_type<float, false> (double), each prefix rounded
// to float as it is stored. The OpenMP scan lets the compiler vectorize the running sum (an
// in-register scan of 4 doubles, then the carry), which a plain loop cannot.
#include <cstdint>

extern "C" void cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static) if (rows > 1 && rows * cols > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double sum = 0.0;
#pragma omp simd reduction(inscan, + : sum)
    for (int64_t c = 0; c < cols; ++c) {
      sum += xr[c];
#pragma omp scan inclusive(sum)
      yr[c] = static_cast<float>(sum);
    }
  }
}
