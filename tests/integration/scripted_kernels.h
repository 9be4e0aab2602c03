// vector_add kernels a scripted model answers with in the strategy tests, and the answer's form.
#pragma once

#include <string>

namespace ksmith::it {

inline const std::string kPlainVectorAdd = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";
inline const std::string kParallelVectorAdd = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
#pragma omp parallel for simd
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";
inline const std::string kWrongVectorAdd = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];
}
)";

/// A model's answer: its words, then the kernel in one fenced block.
inline std::string ScriptedAnswer(const std::string& words, const std::string& code) {
  return words + "\n\n```cpp\n" + code + "```\n";
}

}  // namespace ksmith::it
