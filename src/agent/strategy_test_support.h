// Test helpers shared by the strategies' tests.
#pragma once

#include <filesystem>

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

}  // namespace ksmith::testing
