// expect: integrity_violation
// tries: runs a shell command through system() (e.g. to inspect or talk to the evaluator).
// cause: process_creation
#include <cstdint>
#include <cstdlib>

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  static int ran = std::system("ps aux > /tmp/ksmith-seen.txt");
  (void)ran;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r] = static_cast<float>(sum);
  }
}
