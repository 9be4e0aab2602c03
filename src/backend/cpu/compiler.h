// Builds C++ kernels into shared objects with g++ (or $KSMITH_CXX), cached by content hash.
//
// A kernel is compiled inside a generated wrapper that includes the source, re-declares the
// expected signature (so a mismatch is a compile error that names both), and exports
// `ksmith_entry`, the one symbol the worker calls. Everything else is hidden.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

enum class KernelRole { kCandidate, kBaseline, kReference };

struct BuildRequest {
  std::string source;             // the kernel's text
  std::string display_name;       // file name shown in compiler messages, e.g. "candidate.cpp"
  KernelRole role = KernelRole::kCandidate;
  std::vector<std::string> libraries;  // -l<name>
};

struct BuildOutput {
  bool compiled = false;
  bool cache_hit = false;
  std::filesystem::path shared_object;
  std::string log;            // the compiler's output, untrimmed
  std::string command;        // what was run, for provenance
  double compile_s = 0;       // [seconds], 0 on a cache hit
  bool sandboxed = false;     // the compiler ran under Landlock (reads only system files)
};

struct CompilerInfo {
  std::string executable;  // "g++"
  std::string version;     // first line of --version
  std::vector<std::string> flags;
};

class CpuCompiler {
 public:
  /// Finds the compiler and reads its version; fails when none runs.
  static Result<CpuCompiler> Create(std::filesystem::path cache_directory);

  /// Compile failures are a BuildOutput with compiled == false; an Error means the compiler
  /// could not be run at all.
  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  /// Builds a trusted, self-contained source (no wrapper): the machine probes.
  Result<BuildOutput> BuildStandalone(const std::string& source, const std::string& display_name) const;

  const CompilerInfo& info() const { return info_; }

  /// The wrapper that binds `ksmith_entry` to the task's function (public for tests).
  static std::string WrapperSource(const Task& task, KernelRole role,
                                   const std::filesystem::path& kernel_path);

 private:
  CpuCompiler(CompilerInfo info, std::filesystem::path cache_directory)
      : info_(std::move(info)), cache_directory_(std::move(cache_directory)) {}

  /// Compiles `wrapper` (which includes the kernel, written beside it) unless cached under `key`.
  Result<BuildOutput> Compile(const std::string& key, const std::string& kernel_source,
                              const std::string& display_name, const std::string& wrapper,
                              const std::vector<std::string>& libraries) const;

  CompilerInfo info_;
  std::filesystem::path cache_directory_;
};

}  // namespace ksmith
