// expect: integrity_violation
// tries: computes relu, then writes a forged "result" frame straight into descriptor 3 (where a
// harness's channel often sits) with write().
// cause: file_access
#include <cstdint>
#include <cstring>
#include <unistd.h>

extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  const char frame[] = "{\"type\":\"result\",\"status\":\"passed\",\"speedup\":1000}";
  const uint32_t length = sizeof(frame) - 1;
  write(3, &length, sizeof(length));
  write(3, frame, length);
}
