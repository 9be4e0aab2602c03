// Which library made the call now in progress: the first frame of the calling thread's stack that
// lies in neither the process's executable nor a library named as plumbing. The CUDA worker asks
// it inside CUPTI's launch callbacks, so that each kernel is attributed to the code that launched
// it (a candidate's extension, Triton's launcher in its build, torch, cuBLAS) rather than to
// what Python saw being called.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ksmith {

class LaunchOrigin {
 public:
  /// `plumbing`: file-name prefixes of the libraries a call passes through on its way to the
  /// driver ("libcuda.", "libcupti", "libcudart").
  explicit LaunchOrigin(std::vector<std::string> plumbing);

  /// The path of the library that made the current call; "" when every frame is the executable's
  /// or plumbing. Loads the unwinder on first use: call once before a sandbox closes the files.
  std::string Caller() const;

 private:
  bool Skipped(const void* base, std::string_view path) const;

  std::vector<std::string> plumbing_;
  const void* executable_base_ = nullptr;
};

/// Whether `library` lies inside one of `folders` (or is one of them, for a file).
bool IsUnder(std::string_view library, const std::vector<std::string>& folders);

}  // namespace ksmith
