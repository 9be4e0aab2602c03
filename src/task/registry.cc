#include "task/registry.h"

#include <algorithm>
#include <cstdlib>

#include "core/strings.h"
#include "task/task_loader.h"

namespace ksmith {

namespace fs = std::filesystem;

fs::path TaskRegistry::DefaultRoot() {
  if (const char* root = std::getenv("KSMITH_TASKS_DIR"); root && *root) return root;
  return fs::path(KSMITH_SOURCE_DIR) / "tasks";
}

Result<std::vector<TaskEntry>> TaskRegistry::List() const {
  std::error_code error;
  if (!fs::is_directory(root_, error)) {
    return MakeError(ErrorKind::kNotFound, "task folder {} does not exist (set KSMITH_TASKS_DIR)",
                     root_.string());
  }
  std::vector<TaskEntry> entries;
  for (const auto& category : fs::directory_iterator(root_, error)) {
    if (!category.is_directory()) continue;
    for (const auto& task : fs::directory_iterator(category.path(), error)) {
      if (!fs::exists(task.path() / "task.toml")) continue;
      entries.push_back({task.path().filename().string(), category.path().filename().string(),
                         task.path()});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const TaskEntry& a, const TaskEntry& b) { return a.name < b.name; });
  return entries;
}

Result<Task> TaskRegistry::Find(std::string_view name_or_path) const {
  const fs::path as_path(name_or_path);
  if (name_or_path.find('/') != std::string_view::npos && fs::exists(as_path / "task.toml")) {
    return LoadTask(as_path);
  }
  auto entries = List();
  if (!entries.ok()) return entries.error();
  std::vector<std::string> names;
  for (const auto& entry : *entries) {
    if (entry.name == name_or_path) return LoadTask(entry.directory);
    names.push_back(entry.name);
  }
  const auto nearest = NearestNames(name_or_path, names);
  std::string hint = nearest.empty() ? " (`ksmith tasks` lists them)" : "; did you mean ";
  for (size_t i = 0; i < nearest.size(); ++i) {
    hint += (i > 0 ? ", " : "") + std::string("'") + nearest[i] + "'";
  }
  if (!nearest.empty()) hint += "?";
  return MakeError(ErrorKind::kNotFound, "unknown task '{}'{}", name_or_path, hint);
}

}  // namespace ksmith
