#include "bench/suite.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/files.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// The n of "level<n>"; nullopt for any other name.
std::optional<int> LevelOf(const std::string& suite) {
  constexpr std::string_view kPrefix = "level";
  if (!suite.starts_with(kPrefix) || suite.size() == kPrefix.size() || suite.size() > kPrefix.size() + 3) {
    return std::nullopt;
  }
  int level = 0;
  for (char c : suite.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    level = level * 10 + (c - '0');
  }
  return level;
}

// A task's `level` (1 when absent, as the task loader has it). Only task.toml's syntax is checked:
// a task with another fault is still selected, and its run reports the fault.
Result<int> TaskLevel(const std::filesystem::path& directory) {
  const std::filesystem::path path = directory / "task.toml";
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  try {
    const toml::table root = toml::parse(*text, path.string());
    return static_cast<int>(root["level"].value_or(int64_t{1}));
  } catch (const toml::parse_error& error) {
    return MakeError(ErrorKind::kParse, "{}:{}:{}: {}", path.string(), error.source().begin.line,
                     error.source().begin.column, error.description());
  }
}

// The tasks whose `level` is `level`.
Result<std::vector<std::string>> TasksAtLevel(int level, const std::vector<TaskEntry>& entries) {
  std::vector<std::string> names;
  std::set<int> levels;
  for (const auto& entry : entries) {
    auto task_level = TaskLevel(entry.directory);
    if (!task_level.ok()) return task_level.error();
    levels.insert(*task_level);
    if (*task_level == level) names.push_back(entry.name);
  }
  if (!names.empty()) return names;
  std::string known;
  for (int present : levels) known += fmt::format("{}level{}", known.empty() ? "" : ", ", present);
  return MakeError(ErrorKind::kInvalidArgument, "no task is at level {} (suites by level here: {})", level,
                   known.empty() ? "none" : known);
}

}  // namespace

Result<std::vector<std::string>> ResolveSuite(const std::string& suite, const TaskRegistry& registry) {
  std::error_code error;
  if (std::filesystem::is_directory(suite, error)) {
    std::vector<std::string> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(suite, error)) {
      if (entry.path().filename() == "task.toml") paths.push_back(entry.path().parent_path().string());
    }
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) return MakeError(ErrorKind::kInvalidArgument, "suite folder {} holds no task.toml", suite);
    return paths;
  }
  auto entries = registry.List();
  if (!entries.ok()) return entries.error();
  // "all" and "level<n>" are ksmith's own tasks (the first root); imported tasks join a suite by
  // their category ("kernelbench") or by name, so that importing never changes what "all" measures.
  std::vector<TaskEntry> built_in;
  for (const auto& entry : *entries) {
    if (entry.directory.parent_path().parent_path() == registry.root()) built_in.push_back(entry);
  }
  if (const auto level = LevelOf(suite)) return TasksAtLevel(*level, built_in);
  std::set<std::string> categories;
  std::vector<std::string> names, task_names;
  for (const auto& entry : *entries) {
    categories.insert(entry.category);
    task_names.push_back(entry.name);
    const bool is_built_in = entry.directory.parent_path().parent_path() == registry.root();
    if ((suite == "all" && is_built_in) || suite == entry.category) names.push_back(entry.name);
  }
  if (!names.empty()) return names;
  if (!suite.empty()) {
    std::vector<std::string> listed;
    size_t start = 0;
    while (start <= suite.size()) {
      const size_t comma = suite.find(',', start);
      const std::string name(Trim(std::string_view(suite).substr(start, comma - start)));
      if (!name.empty()) {
        auto task = registry.Find(name);
        // One word that names nothing is more likely a mistyped suite than a task, unless it is
        // close to a task's name (the registry's error then suggests it).
        const bool one_word = comma == std::string::npos && start == 0;
        if (!task.ok() && (!one_word || !NearestNames(name, task_names).empty())) return task.error();
        if (!task.ok()) break;
        listed.push_back(name);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!listed.empty()) return listed;
  }
  std::string known = "all, level1, level2";
  for (const auto& category : categories) known += ", " + category;
  return MakeError(ErrorKind::kInvalidArgument, "unknown suite '{}': give {}, task names separated by commas, or a folder of tasks",
                   suite, known);
}

}  // namespace ksmith
