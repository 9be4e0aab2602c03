// The CUDA worker's side of the NVRTC form (backend/cuda/nvrtc_form.h): it loads the cubin that
// an NVRTC-form library carries, which ksmith compiled, and launches its kernels for it.
//
// The candidate's host code never loads code itself (the audit forbids cudaLibraryLoad*): its
// KSMITH_LAUNCH calls come here through the slot this binds. Each launch is checked before it
// reaches the GPU: the kernel must be one the build compiled, the arguments as many and as large
// as the kernel's parameters (a 4-byte int passed for an int64_t parameter would be read with 4
// bytes of garbage), the sizes within CUDA's limits. A refused launch fails the call with a CUDA
// error and says why in the worker's reply (TakeLaunchRefusal). Dynamic shared memory above the
// default 48 KiB is granted as the launch asks, as a `cudaFuncSetAttribute` would.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "binary/shared_library.h"
#include "core/result.h"

namespace ksmith {

class NvrtcModule {
 public:
  /// nullptr for a library without ksmith_module (built by nvcc); an error for one whose module
  /// cannot be loaded (a cubin for another GPU, a kernel the table names that it lacks).
  static Result<std::unique_ptr<NvrtcModule>> Bind(const SharedLibrary& library);
  ~NvrtcModule();
  NvrtcModule(const NvrtcModule&) = delete;
  NvrtcModule& operator=(const NvrtcModule&) = delete;

 private:
  struct Kernel {
    cudaKernel_t handle = nullptr;
    std::vector<size_t> parameter_bytes;
    unsigned long long shared_bytes_granted = 0;
  };

  NvrtcModule() = default;
  static int Launch(void* context, const char* kernel, const unsigned long long* grid,
                    const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                    void** arguments, const unsigned long long* argument_bytes, int argument_count);

  cudaLibrary_t library_ = nullptr;
  std::map<std::string, Kernel> kernels_;
};

/// Why the last launch was refused, taken ("" when none was since the last look).
std::string TakeLaunchRefusal();

}  // namespace ksmith
