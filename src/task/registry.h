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
  /// Where `ksmith import` writes tasks by default: $XDG_DATA_HOME/ksmith/tasks, else
  /// ~/.local/share/ksmith/tasks.
  static std::filesystem::path ImportedRoot();
  /// The built-in root, then each folder of $KSMITH_TASKS_PATH (':'-separated), then ImportedRoot().
  static TaskRegistry Default();

  explicit TaskRegistry(std::filesystem::path root) : roots_{std::move(root)} {}
  /// The first root must exist; later ones are searched where they exist.
  explicit TaskRegistry(std::vector<std::filesystem::path> roots) : roots_(std::move(roots)) {}

  /// Every <root>/<category>/<name>/task.toml, sorted by name; where two roots hold the same
  /// name, the earlier root's task is the one found.
  Result<std::vector<TaskEntry>> List() const;

  /// Loads a task by name, or by the path of its folder. An unknown name suggests near names.
  Result<Task> Find(std::string_view name_or_path) const;

  const std::filesystem::path& root() const { return roots_.front(); }
  const std::vector<std::filesystem::path>& roots() const { return roots_; }

 private:
  std::vector<std::filesystem::path> roots_;
};

}  // namespace ksmith
