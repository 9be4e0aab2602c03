// nvcc for the tests that build CUDA kernels: the Hopper target every such test builds for, its
// cache in the test's folder. Where nvcc is not installed the test skips, saying so.
#pragma once

#include <filesystem>

#include "backends/cuda/nvcc_compiler.h"
#include "core/result.h"

namespace ksmith::testing {

/// nvcc building for sm_90a, its cache under `cache_directory`; an error that says nvcc is not
/// installed where it cannot be found.
inline Result<NvccCompiler> TestNvcc(const std::filesystem::path& cache_directory) {
  auto compiler = NvccCompiler::Create(cache_directory, CudaTarget{"sm_90a", "--arch flag"});
  if (!compiler.ok()) return MakeError(compiler.error().kind, "nvcc is not installed: {}", compiler.error().message);
  return compiler;
}

}  // namespace ksmith::testing
