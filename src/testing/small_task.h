// A vector_add task with small shapes, for tests that run whole evaluations: one takes well
// under a second on the cpu. Its reference and cpu baseline are the built-in task's.
#pragma once

#include <filesystem>

#include "core/result.h"
#include "task/task.h"

namespace ksmith::testing {

/// Writes the task to `root`/elementwise/vector_add and loads it.
Result<Task> WriteSmallVectorAdd(const std::filesystem::path& root);

}  // namespace ksmith::testing
