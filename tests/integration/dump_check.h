// Test support for `ksmith eval --dump-failure` (integration and gpu tests): a scratch folder, numpy through Debian's
// python3 (the one that has it, where a python3 first on PATH may not), and the failed case's label.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_runner.h"

namespace ksmith::it {

inline constexpr const char* kPython = "/usr/bin/python3";

struct ScratchFolder {
  fs::path path;
  explicit ScratchFolder(const std::string& name) : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchFolder() { fs::remove_all(path); }
};

// Runs `script` under /usr/bin/python3 with numpy; its stdout. Sets `missing` when numpy is not there.
inline std::string RunPython(const std::string& script, bool& missing) {
  missing = std::system((std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0;
  if (missing) return {};
  const std::string command = std::string(kPython) + " - <<'PY'\n" + script + "\nPY\n";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  while (size_t count = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, count);
  ::pclose(pipe);
  return out;
}

inline std::string FailedCaseLabel(const nlohmann::json& verdict) {
  const nlohmann::json* stage = FailedStage(verdict);
  return stage ? stage->at("details").value("failed_case", std::string()) : std::string();
}

}  // namespace ksmith::it
