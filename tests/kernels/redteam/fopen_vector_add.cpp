// expect: integrity_violation
// tries: opens /etc/passwd with fopen (reading files outside the sandbox), then computes honestly.
// cause: file_access
#include <cstdint>
#include <cstdio>

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  if (FILE* file = std::fopen("/etc/passwd", "r")) {
    char line[256];
    if (std::fgets(line, sizeof(line), file) != nullptr) std::puts(line);
    std::fclose(file);
  }
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
