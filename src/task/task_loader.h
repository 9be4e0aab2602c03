// Reads and validates task.toml. Every error names the file and, where known, the line.
#pragma once

#include <filesystem>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

Result<Task> LoadTask(const std::filesystem::path& directory);

}  // namespace ksmith
