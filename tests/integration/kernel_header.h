// The header of a red-team kernel file (see redteam_test.cc) and the helpers to read it,
// shared by the CPU red team (integration) and the CUDA one (gpu).
#pragma once

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace ksmith::it {

inline const std::set<std::string> kStatuses = {"passed",       "compile_error", "runtime_error",
                                         "timeout",      "wrong_output",  "integrity_violation",
                                         "infra_error"};

struct RedteamKernel {
  fs::path file;
  std::string task;
  std::string expect;
  std::string tries;
  std::string cause;
  std::vector<std::string> args;
  std::string problem;  // why the header is unusable; empty when fine
};

// KSMITH_TEST_TASKS (a comma-separated list of task names) narrows every per-task test to those
// tasks: checking one new task should not cost a run over the whole suite.
inline bool TaskSelected(const std::string& name) {
  const char* selection = std::getenv("KSMITH_TEST_TASKS");
  if (selection == nullptr || *selection == '\0') return true;
  const std::string list = "," + std::string(selection) + ",";
  return list.find("," + name + ",") != std::string::npos;
}

// Every built-in task, or with `selected_only` those KSMITH_TEST_TASKS names.
inline std::vector<std::string> TaskNames(bool selected_only = true) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& category : fs::directory_iterator(SourceDir() / "tasks", error)) {
    if (!category.is_directory()) continue;
    for (const auto& task : fs::directory_iterator(category.path(), error)) {
      const std::string name = task.path().filename().string();
      if (fs::exists(task.path() / "task.toml") && (!selected_only || TaskSelected(name))) names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

inline std::string Trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

inline RedteamKernel ParseKernel(const fs::path& file, const std::string& extension) {
  RedteamKernel kernel;
  kernel.file = file;
  const std::string name = file.filename().string();
  for (const auto& task : TaskNames(false)) {
    const std::string suffix = "_" + task + extension;
    if (name.size() > suffix.size() && name.ends_with(suffix) && task.size() > kernel.task.size()) {
      kernel.task = task;
    }
  }
  if (kernel.task.empty()) kernel.problem = "the file name does not end in _<task>" + extension;
  std::istringstream lines(Slurp(file));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.starts_with("//")) break;
    const std::string body = Trimmed(line.substr(2));
    const auto colon = body.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = body.substr(0, colon);
    const std::string value = Trimmed(body.substr(colon + 1));
    if (key == "expect") {
      if (number != 1) kernel.problem = "`// expect:` must be the first line";
      kernel.expect = value;
    } else if (key == "tries") {
      kernel.tries = value;
    } else if (key == "cause") {
      kernel.cause = value;
    } else if (key == "args") {
      std::istringstream words(value);
      for (std::string word; words >> word;) kernel.args.push_back(word);
    }
  }
  if (kernel.expect.empty()) kernel.problem = "no `// expect: <status>` first line";
  else if (!kStatuses.count(kernel.expect)) kernel.problem = "unknown status '" + kernel.expect + "'";
  if (kernel.tries.empty() && kernel.problem.empty()) kernel.problem = "no `// tries:` line";
  return kernel;
}

}  // namespace ksmith::it
