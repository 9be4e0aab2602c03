// Test helper: builds a small shared object with the system compiler.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "core/subprocess.h"

namespace ksmith::testing {

/// Writes `source` to <dir>/<stem>.cc and builds <dir>/<stem>.so with g++ -shared -fPIC -O1.
/// Returns an empty string on success, else what went wrong (with the compiler's output).
inline std::string BuildSharedObject(const std::filesystem::path& dir, const std::string& stem,
                                     const std::string& source) {
  std::ofstream(dir / (stem + ".cc")) << source;
  SpawnOptions options;
  options.argv = {"g++", "-shared", "-fPIC", "-O1", "-o", (dir / (stem + ".so")).string(),
                  (dir / (stem + ".cc")).string()};
  options.inherit_environment = true;
  auto run = RunCommand(options, std::chrono::seconds(60));
  if (!run.ok()) return run.error().message;
  return run->succeeded() ? std::string() : run->Describe() + "\n" + run->output;
}

}  // namespace ksmith::testing
