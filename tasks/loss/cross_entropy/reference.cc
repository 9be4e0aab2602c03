#include <cmath>
#include <cstdint>

extern "C" void cross_entropy_reference(const float* logits, const float* target, double* loss,
                                        int64_t rows, int64_t classes) {
  double total = 0.0;  // sum over rows of sum_c target * log_softmax
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = logits + r * classes;
    const float* tr = target + r * classes;
    double mx = xr[0];
    for (int64_t c = 1; c < classes; ++c) mx = std::fmax(mx, static_cast<double>(xr[c]));
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(xr[c]) - mx);
    const double lse = std::log(sum);
    double row = 0.0;
    for (int64_t c = 0; c < classes; ++c) {
      row += static_cast<double>(tr[c]) * ((static_cast<double>(xr[c]) - mx) - lse);
    }
    total += row;
  }
  loss[0] = -total / static_cast<double>(rows);
}
