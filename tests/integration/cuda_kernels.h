// The CUDA test kernels: honest ones (tests/kernels/cuda/honest/<task>_{fast,slow}.cu, which
// must pass) and the red team (tests/kernels/cuda/redteam/<class>_<task>.cu, headed like the CPU
// red team), grouped by task.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernel_header.h"

namespace ksmith::it {

inline fs::path CudaKernelDir() { return SourceDir() / "tests" / "kernels" / "cuda"; }

/// Every CUDA kernel with the status it must get; honest ones expect "passed".
inline std::vector<RedteamKernel> AllCudaKernels() {
  std::vector<RedteamKernel> kernels;
  for (const auto& file : FilesIn(CudaKernelDir() / "redteam", ".cu")) kernels.push_back(ParseKernel(file, ".cu"));
  for (const auto& file : FilesIn(CudaKernelDir() / "honest", ".cu")) {
    RedteamKernel kernel;
    kernel.file = file;
    kernel.expect = "passed";
    kernel.tries = "an honest kernel";
    const std::string name = file.stem().string();
    kernel.task = name.substr(0, name.rfind('_'));
    kernels.push_back(kernel);
  }
  std::erase_if(kernels, [](const RedteamKernel& kernel) { return !kernel.task.empty() && !TaskSelected(kernel.task); });
  return kernels;
}

inline std::map<std::string, std::vector<RedteamKernel>> CudaKernelsByTask() {
  std::map<std::string, std::vector<RedteamKernel>> groups;
  for (auto& kernel : AllCudaKernels()) groups[kernel.task].push_back(kernel);
  return groups;
}

}  // namespace ksmith::it
