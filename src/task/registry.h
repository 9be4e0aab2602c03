// Finds tasks by name under the tasks root.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

struct TaskEntry {
  std::string name;
  std::string category;
  std::filesystem::path directory;
};

class TaskRegistry {
 public:
  /// The built-in tasks: $KSMITH_TASKS_DIR if set, else the source tree's tasks/.
  static std::filesystem::path DefaultRoot();

  explicit TaskRegistry(std::filesystem::path root) : root_(std::move(root)) {}

  /// Every tasks/<category>/<name>/task.toml under the root, sorted by name.
  Result<std::vector<TaskEntry>> List() const;

  /// Loads a task by name, or by the path of its folder. An unknown name suggests near names.
  Result<Task> Find(std::string_view name_or_path) const;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace ksmith
