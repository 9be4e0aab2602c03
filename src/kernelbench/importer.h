// `ksmith import kernelbench`: finds the problem files, has a trusted python3 with torch analyse
// them (ksmith_kb/importer.py, each problem in a child process under a time limit), and writes a
// task folder per imported problem.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct KernelBenchImportOptions {
  std::filesystem::path source;         // a KernelBench checkout, a levelN folder, or one .py file
  std::vector<int> levels;              // empty: every level found
  std::vector<std::string> problems;    // problem ids ("23", "40-45") or file stems; empty: all
  std::filesystem::path out;            // the tasks root the folders go under (<out>/kernelbench/<name>)
  std::string python;                   // empty: the first of python3, /usr/bin/python3 with torch
  std::filesystem::path cache_directory;  // the build cache (the shims are compiled to calibrate)
  double problem_timeout_s = 120;
  int jobs = 0;                         // 0: this machine's cores
  /// The most bytes a GPU timing shape's tensors may take together; 0: the importing GPU's memory
  /// over importer.py's GPU_MEMORY_FACTOR. The problem's own sizes where they fit, else halved.
  uint64_t gpu_bench_bytes = 0;
  /// Called as each problem's result arrives.
  std::function<void(const nlohmann::json& result, size_t done, size_t total)> progress;
};

struct KernelBenchProblem {
  std::filesystem::path file;
  int level = 0;
};

/// The problem files under `source` for `levels` and `problems`, in level then problem order.
Result<std::vector<KernelBenchProblem>> FindKernelBenchProblems(const KernelBenchImportOptions& options);

/// The python3 to run: `configured` if given (it must import torch), else the first of python3
/// and /usr/bin/python3 that imports torch. Returns its path and torch's version.
Result<std::pair<std::string, std::string>> FindTorchPython(const std::string& configured);

/// Imports every problem found. The report holds one result per problem ({"file", "level",
/// "status": "imported" | "skipped", "name", "folder", "reason", "analysis_s", "accumulation"}), the python used,
/// and the time taken. Fails only where nothing can be imported at all (no python with torch, no
/// problem files, an unwritable --out).
Result<nlohmann::json> ImportKernelBench(const KernelBenchImportOptions& options);

}  // namespace ksmith
