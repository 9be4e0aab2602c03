// Builds C++ kernels into shared objects with g++ (or $KSMITH_CXX), cached by content hash.
//
// A kernel is compiled inside a generated wrapper that includes the source, re-declares the
// expected signature (so a mismatch is a compile error that names both), and exports
// `ksmith_entry`, the one symbol the worker calls. Everything else is hidden.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "compile/build.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

class CpuCompiler {
 public:
  /// Finds the compiler and reads its version; fails when none runs. Every build runs under
  /// `limits`.
  static Result<CpuCompiler> Create(std::filesystem::path cache_directory, BuildLimits limits = {});

  /// Compile failures are a BuildOutput with compiled == false; an Error means the compiler
  /// could not be run at all.
  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  /// Builds a trusted, self-contained source (no wrapper): the machine probes.
  Result<BuildOutput> BuildStandalone(const std::string& source, const std::string& display_name) const;

  const CompilerInfo& info() const { return info_; }
  const BuildLimits& limits() const { return limits_; }

  /// The wrapper that binds `ksmith_entry` to the task's function (public for tests).
  static std::string WrapperSource(const Task& task, KernelRole role,
                                   const std::filesystem::path& kernel_path);

 private:
  CpuCompiler(CompilerInfo info, std::filesystem::path cache_directory, BuildLimits limits)
      : info_(std::move(info)), cache_directory_(std::move(cache_directory)), limits_(limits) {}

  /// Compiles `wrapper` (which includes the kernel, written beside it) unless cached under `key`.
  Result<BuildOutput> Compile(const std::string& key, const std::string& kernel_source,
                              const std::string& display_name, const std::string& wrapper,
                              const std::vector<std::string>& libraries) const;

  CompilerInfo info_;
  std::filesystem::path cache_directory_;
  BuildLimits limits_;
};

}  // namespace ksmith
