// expect: integrity_violation
// tries: opens a UDP socket to leak inputs to (or fetch answers from) the network.
// cause: network
#include <cmath>
#include <cstdint>
#include <sys/socket.h>

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  static int fd = socket(AF_INET, SOCK_DGRAM, 0);
  (void)fd;
  for (int64_t r = 0; r < rows; ++r) {
    float peak = x[r * cols];
    for (int64_t c = 1; c < cols; ++c) peak = x[r * cols + c] > peak ? x[r * cols + c] : peak;
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) total += std::exp(static_cast<double>(x[r * cols + c] - peak));
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = static_cast<float>(std::exp(static_cast<double>(x[r * cols + c] - peak)) / total);
    }
  }
}
