#include "cuda_worker/nvrtc_module.h"

#include <climits>
#include <cstdio>
#include <mutex>

#include <fmt/format.h>

#include "backend/cuda/nvrtc_form.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// The layout the generated wrapper defines (kLauncherSource in backend/cuda/nvrtc_form.cc).
using LaunchFunction = int (*)(void* context, const char* kernel, const unsigned long long* grid,
                               const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                               void** arguments, const unsigned long long* argument_bytes, int argument_count);
struct ModuleView {
  unsigned version;
  const void* cubin;
  unsigned long long cubin_bytes;
  const char* kernels;
  LaunchFunction* launch;
  void** launch_context;
};
using ModuleFunction = const ModuleView* (*)();

constexpr unsigned long long kDefaultSharedBytes = 48 * 1024;

std::mutex refusal_mutex;
std::string last_refusal;  // guarded by refusal_mutex

// Records why, and fails the launch the way CUDA fails a bad one, so that the call's error
// check sees it (the runtime keeps the error for cudaGetLastError).
int Refuse(std::string why) {
  std::fprintf(stderr, "ksmith: %s\n", why.c_str());
  {
    std::lock_guard lock(refusal_mutex);
    last_refusal = std::move(why);
  }
  return static_cast<int>(cudaLaunchKernel(static_cast<const void*>(nullptr), dim3(0), dim3(0), nullptr, 0, nullptr));
}

std::string CudaText(cudaError_t error) { return fmt::format("{} ({})", cudaGetErrorString(error), cudaGetErrorName(error)); }

}  // namespace

std::string TakeLaunchRefusal() {
  std::lock_guard lock(refusal_mutex);
  return std::exchange(last_refusal, std::string());
}

Result<std::unique_ptr<NvrtcModule>> NvrtcModule::Bind(const SharedLibrary& library) {
  auto symbol = library.Symbol(kNvrtcModuleSymbol);
  if (!symbol.ok()) return std::unique_ptr<NvrtcModule>();
  const ModuleView* view = reinterpret_cast<ModuleFunction>(*symbol)();
  if (view == nullptr || view->version != kNvrtcModuleVersion) {
    return MakeError(ErrorKind::kInvalidArgument, "the NVRTC-form library's module is of version {}, this worker reads {}",
                     view ? view->version : 0, kNvrtcModuleVersion);
  }
  std::unique_ptr<NvrtcModule> module(new NvrtcModule());
  if (auto error = cudaLibraryLoadData(&module->library_, view->cubin, nullptr, nullptr, 0, nullptr, nullptr, 0);
      error != cudaSuccess) {
    cudaGetLastError();
    return MakeError(ErrorKind::kInvalidArgument, "loading the candidate's cubin: {}", CudaText(error));
  }
  for (const auto& line : SplitLines(view->kernels)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string expression = line.substr(0, tab), mangled = line.substr(tab + 1);
    Kernel kernel;
    if (auto error = cudaLibraryGetKernel(&kernel.handle, module->library_, mangled.c_str()); error != cudaSuccess) {
      cudaGetLastError();
      return MakeError(ErrorKind::kInvalidArgument, "the cubin has no kernel {} ({}): {}", expression, mangled,
                       CudaText(error));
    }
    // Past the last parameter the query fails; that error is this loop's, not the candidate's.
    for (size_t index = 0;; ++index) {
      size_t offset = 0, bytes = 0;
      if (cudaFuncGetParamInfo(reinterpret_cast<const void*>(kernel.handle), index, &offset, &bytes) != cudaSuccess) break;
      kernel.parameter_bytes.push_back(bytes);
    }
    cudaGetLastError();
    module->kernels_[expression] = std::move(kernel);
  }
  *view->launch = &NvrtcModule::Launch;
  *view->launch_context = module.get();
  return module;
}

NvrtcModule::~NvrtcModule() {
  if (library_ != nullptr) cudaLibraryUnload(library_);
}

int NvrtcModule::Launch(void* context, const char* name, const unsigned long long* grid,
                        const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                        void** arguments, const unsigned long long* argument_bytes, int argument_count) {
  auto* self = static_cast<NvrtcModule*>(context);
  const std::string expression = name != nullptr ? name : "";
  const auto found = self->kernels_.find(expression);
  if (found == self->kernels_.end()) {
    return Refuse(fmt::format("KSMITH_LAUNCH of '{}': the build compiled no such kernel (it compiles the kernels that "
                              "KSMITH_LAUNCH names in the source, as written there)",
                              expression));
  }
  Kernel& kernel = found->second;
  if (argument_count < 0 || static_cast<size_t>(argument_count) != kernel.parameter_bytes.size()) {
    return Refuse(fmt::format("KSMITH_LAUNCH of {}: {} arguments for its {} parameters", expression, argument_count,
                              kernel.parameter_bytes.size()));
  }
  for (size_t i = 0; i < kernel.parameter_bytes.size(); ++i) {
    if (argument_bytes[i] != kernel.parameter_bytes[i]) {
      return Refuse(fmt::format("KSMITH_LAUNCH of {}: argument {} is {} bytes, the kernel's parameter {} is {} bytes "
                                "(pass the parameter's own type, e.g. int64_t for int64_t)",
                                expression, i + 1, argument_bytes[i], i + 1, kernel.parameter_bytes[i]));
    }
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (grid[axis] > UINT_MAX || block[axis] > UINT_MAX) {
      return Refuse(fmt::format("KSMITH_LAUNCH of {}: a grid or block size of {} does not fit CUDA's unsigned int",
                                expression, std::max(grid[axis], block[axis])));
    }
  }
  if (shared_bytes > kDefaultSharedBytes && shared_bytes > kernel.shared_bytes_granted && shared_bytes <= INT_MAX) {
    int device = 0;
    cudaGetDevice(&device);
    if (cudaKernelSetAttributeForDevice(kernel.handle, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared_bytes), device) == cudaSuccess) {
      kernel.shared_bytes_granted = shared_bytes;
    }
    // Refused (more than the GPU has): the launch fails for it with CUDA's own error.
  }
  const dim3 grid_size(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]));
  const dim3 block_size(static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]));
  return static_cast<int>(cudaLaunchKernel(reinterpret_cast<const void*>(kernel.handle), grid_size, block_size,
                                           arguments, static_cast<size_t>(shared_bytes),
                                           static_cast<cudaStream_t>(stream)));
}

}  // namespace ksmith
