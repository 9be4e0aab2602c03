// Test support for `ksmith eval --dump-failure` (integration and gpu tests): a scratch folder, numpy through the
// first python3 that has it (Debian's here, where a python3 first on PATH may not; the one on PATH on the GPU
// machine, whose /usr/bin/python3 has none), and the failed case's label.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli_runner.h"

namespace ksmith::it {

// The first of /usr/bin/python3 and the python3 on PATH that imports numpy; empty when neither does.
inline const std::string& NumpyPython() {
  static const std::string python = [] {
    for (const char* candidate : {"/usr/bin/python3", "python3"}) {
      if (std::system((std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return std::string(candidate);
    }
    return std::string();
  }();
  return python;
}

struct ScratchFolder {
  fs::path path;
  explicit ScratchFolder(const std::string& name) : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchFolder() { fs::remove_all(path); }
};

// Runs `script` under a python3 with numpy; its stdout. Sets `missing` when no python3 has numpy.
inline std::string RunPython(const std::string& script, bool& missing) {
  missing = NumpyPython().empty();
  if (missing) return {};
  const std::string command = NumpyPython() + " - <<'PY'\n" + script + "\nPY\n";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[4096];
  while (size_t count = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, count);
  ::pclose(pipe);
  return out;
}

// Runs a dump's rerun command as case.json prints it (by this build's ksmith), dumping its own
// failed case into `again`.
inline CliResult ReplayDump(const nlohmann::json& described, const fs::path& again) {
  const auto rerun = described["rerun"].get<std::vector<std::string>>();
  std::vector<std::string> args(rerun.begin() + std::min<size_t>(1, rerun.size()), rerun.end());
  for (const std::string& extra : std::vector<std::string>{"--json", "--quiet", "--dump-failure", again.string()}) {
    args.push_back(extra);
  }
  return RunKsmith(args);
}

inline std::string FailedCaseLabel(const nlohmann::json& verdict) {
  const nlohmann::json* stage = FailedStage(verdict);
  return stage ? stage->at("details").value("failed_case", std::string()) : std::string();
}

}  // namespace ksmith::it
