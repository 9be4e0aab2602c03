#include <cmath>
#include <cstdint>

// beta = 1, threshold = 20, as torch.nn.functional.softplus. Below the threshold exp(v) <= e^20
// cannot overflow; for very negative v it underflows to 0 and log1p(0) = 0.
extern "C" void softplus_reference(const float* x, double* y, int64_t n) {
  const double beta = 1.0;
  const double threshold = 20.0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    y[i] = v * beta > threshold ? v : std::log1p(std::exp(v * beta)) / beta;
  }
}
