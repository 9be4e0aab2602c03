// The CUDA worker's side of the NVRTC form (backends/cuda/nvrtc_form.h): it loads the cubin that
// ksmith compiled for an NVRTC-form library, from the cache beside the library, and launches its
// kernels for it.
//
// Nothing of the candidate's decides what is loaded: the evaluator names the cubin (setup's
// `<role>_device_code`), the worker reads it and its kernel table from their files (which the
// candidate cannot write), and only then looks up the library's launcher slot, a data symbol,
// and writes its launch function there; no code of the library runs on the worker's behalf. The
// candidate's host code never loads code itself (the audit forbids cudaLibraryLoad*).
//
// Each launch is checked before it reaches the GPU: the kernel must be one the build compiled,
// the arguments as many as the kernel's parameters, each of its parameter's size and kind (a
// 4-byte int for an int64_t parameter, or a float for an int one, would be read as other bits),
// the sizes within CUDA's limits. A refused launch fails with a CUDA error, and says why in the
// worker's reply (TakeLaunchRefusal). Dynamic shared memory above the default 48 KiB is granted
// as the launch asks, as a cudaFuncSetAttribute would.
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
  /// Loads `cubin_path` and the kernel table beside it (backends/cuda/nvrtc_form.h); an error for
  /// a cubin that does not load here (built for another GPU) or lacks a kernel its table names.
  static Result<std::unique_ptr<NvrtcModule>> Load(const std::string& cubin_path);
  /// Fills `library`'s launcher slot with this module's launcher; an error where it has none.
  /// The module must outlive every call into the library.
  Status BindTo(const SharedLibrary& library);
  ~NvrtcModule();
  NvrtcModule(const NvrtcModule&) = delete;
  NvrtcModule& operator=(const NvrtcModule&) = delete;

 private:
  struct Kernel {
    cudaKernel_t handle = nullptr;
    std::vector<size_t> parameter_bytes;
    std::string parameter_kinds;  // one letter per parameter, as the host header's Kind() writes them
    unsigned long long shared_bytes_granted = 0;
  };

  NvrtcModule() = default;
  static int Launch(void* context, const char* kernel, const unsigned long long* grid,
                    const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                    void** arguments, const unsigned long long* argument_bytes, const char* argument_kinds,
                    int argument_count);

  cudaLibrary_t library_ = nullptr;
  std::map<std::string, Kernel> kernels_;
};

/// Why a launch was refused since the last look, taken ("" when none was). The worker takes it
/// before each call and after it, so that a refusal is reported with the call that made it.
std::string TakeLaunchRefusal();

}  // namespace ksmith
