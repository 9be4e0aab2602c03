// expect: integrity_violation
// tries: a computed include (#include MACRO) of a file outside the candidate: no quote or angle
// bracket follows #include, so the include rules do not see it, and the compiler's errors print
// the file's lines into the build log (here /etc/passwd; a task.toml would reveal hidden shapes).
// cause: include
#include <cmath>
#include <cstdint>

#define KS_SECRET_FILE "/etc/passwd"
#include KS_SECRET_FILE

extern "C" void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
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
