#include <cmath>
#include <cstdint>

extern "C" void conv1d_reference(const float* x, const float* w, double* y, int64_t n, int64_t cin,
                                 int64_t l, int64_t cout, int64_t kw, int64_t lo) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t t = 0; t < lo; ++t) {
        double sum = 0.0;
        for (int64_t c = 0; c < cin; ++c)
          for (int64_t q = 0; q < kw; ++q) {
            sum += static_cast<double>(x[(b * cin + c) * l + t + q]) * w[(o * cin + c) * kw + q];
          }
        y[(b * cout + o) * lo + t] = sum;
      }
}
