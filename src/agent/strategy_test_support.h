// Test helpers shared by the strategies' tests.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "task/registry.h"

namespace ksmith::testing {

/// The built-in vector_add task, read from the source tree.
inline Task LoadVectorAdd() {
  TaskRegistry registry(std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks");
  auto task = registry.Find("vector_add");
  EXPECT_TRUE(task.ok()) << task.error().message;
  return task.value();
}

/// A vector_add kernel with two knobs: BLOCK over `blocks` ("64, 128") and UNROLL over 1, 2, 4.
inline std::string TunableVectorAdd(const std::string& blocks) {
  return "#include <cstdint>\n// @tune BLOCK: " + blocks + R"(
#ifndef BLOCK
#define BLOCK 64
#endif
// @tune UNROLL: 1, 2, 4
#ifndef UNROLL
#define UNROLL 1
#endif
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";
}

}  // namespace ksmith::testing
