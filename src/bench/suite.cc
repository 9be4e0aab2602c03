#include "bench/suite.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/strings.h"

namespace ksmith {

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
  std::set<std::string> categories;
  std::vector<std::string> names;
  for (const auto& entry : *entries) {
    categories.insert(entry.category);
    if (suite == "all" || suite == entry.category) names.push_back(entry.name);
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
        if (!task.ok()) return task.error();
        listed.push_back(name);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!listed.empty()) return listed;
  }
  std::string known = "all";
  for (const auto& category : categories) known += ", " + category;
  return MakeError(ErrorKind::kInvalidArgument, "unknown suite '{}': give {}, task names separated by commas, or a folder of tasks",
                   suite, known);
}

}  // namespace ksmith
