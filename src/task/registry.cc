#include "task/registry.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/strings.h"
#include "task/task_loader.h"

namespace ksmith {

namespace fs = std::filesystem;

fs::path TaskRegistry::DefaultRoot() {
  if (const char* root = std::getenv("KSMITH_TASKS_DIR"); root && *root) return root;
  return fs::path(KSMITH_SOURCE_DIR) / "tasks";
}

fs::path TaskRegistry::ImportedRoot() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data) return fs::path(data) / "ksmith" / "tasks";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local" / "share" / "ksmith" / "tasks";
}

TaskRegistry TaskRegistry::Default() {
  std::vector<fs::path> roots{DefaultRoot()};
  if (const char* path = std::getenv("KSMITH_TASKS_PATH"); path && *path) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const size_t colon = std::min(rest.find(':'), rest.size());
      if (colon > 0) roots.emplace_back(std::string(rest.substr(0, colon)));
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
  }
  roots.push_back(ImportedRoot());
  return TaskRegistry(std::move(roots));
}

Result<std::vector<TaskEntry>> TaskRegistry::List() const {
  std::error_code error;
  if (!fs::is_directory(roots_.front(), error)) {
    return MakeError(ErrorKind::kNotFound, "task folder {} does not exist (set KSMITH_TASKS_DIR)",
                     roots_.front().string());
  }
  std::vector<TaskEntry> entries;
  std::set<std::string> names;
  for (const auto& root : roots_) {
    std::vector<TaskEntry> found;
    for (const auto& category : fs::directory_iterator(root, error)) {
      if (!category.is_directory()) continue;
      for (const auto& task : fs::directory_iterator(category.path(), error)) {
        if (!fs::exists(task.path() / "task.toml")) continue;
        found.push_back({task.path().filename().string(), category.path().filename().string(), task.path()});
      }
    }
    // Directory order is arbitrary: sort before the first-root-wins rule picks among duplicates.
    std::sort(found.begin(), found.end(), [](const TaskEntry& a, const TaskEntry& b) { return a.directory < b.directory; });
    for (auto& entry : found) {
      if (names.insert(entry.name).second) entries.push_back(std::move(entry));
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
