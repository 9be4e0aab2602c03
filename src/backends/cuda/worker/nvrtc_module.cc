#include "backends/cuda/worker/nvrtc_module.h"

#include <cxxabi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "backends/cuda/nvrtc_form.h"
#include "core/files.h"
#include "core/strings.h"

namespace ksmith {
namespace {

// The slot's layout in ksmith's launcher object (NvrtcLauncherSource, backends/cuda/nvrtc_headers.cc).
using LaunchFunction = int (*)(void* context, const char* kernel, const unsigned long long* grid,
                               const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                               void** arguments, const unsigned long long* argument_bytes,
                               const char* argument_kinds, int argument_count);
struct LauncherSlot {
  LaunchFunction launch;
  void* context;
};

constexpr unsigned long long kDefaultSharedBytes = 48 * 1024;
constexpr size_t kMaxCubinBytes = size_t{1} << 30;

std::mutex refusal_mutex;
std::string last_refusal;  // guarded by refusal_mutex

// Records why, and fails the launch the way CUDA fails a bad one, so that the call's error
// check sees it too (the runtime keeps the error for cudaGetLastError).
int Refuse(std::string why) {
  std::fprintf(stderr, "ksmith: %s\n", why.c_str());
  {
    std::lock_guard lock(refusal_mutex);
    last_refusal = std::move(why);
  }
  return static_cast<int>(cudaLaunchKernel(static_cast<const void*>(nullptr), dim3(0), dim3(0), nullptr, 0, nullptr));
}

std::string CudaText(cudaError_t error) { return fmt::format("{} ({})", cudaGetErrorString(error), cudaGetErrorName(error)); }

std::string KindName(char kind) {
  switch (kind) {
    case 'p': return "a pointer";
    case 'i': return "an integer";
    case 'f': return "floating point";
    default: return "a struct or vector type";
  }
}

std::string Demangle(const std::string& mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return "";
  std::string demangled(text);
  std::free(text);
  return demangled;
}

}  // namespace

std::string TakeLaunchRefusal() {
  std::lock_guard lock(refusal_mutex);
  return std::exchange(last_refusal, std::string());
}

Result<std::unique_ptr<NvrtcModule>> NvrtcModule::Load(const std::string& cubin_path) {
  auto cubin = ReadFile(cubin_path, kMaxCubinBytes);
  if (!cubin.ok()) return cubin.error();
  auto table = ReadFile(std::filesystem::path(cubin_path).replace_extension(kNvrtcKernelsExtension));
  if (!table.ok()) return table.error();
  std::unique_ptr<NvrtcModule> module(new NvrtcModule());
  if (auto error = cudaLibraryLoadData(&module->library_, cubin->data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      error != cudaSuccess) {
    cudaGetLastError();
    // Built for another GPU or toolkit: this machine's mismatch. Anything else the driver refuses
    // (device data larger than the GPU, ...) is what the candidate's code asked for.
    const bool machine = error == cudaErrorNoKernelImageForDevice || error == cudaErrorUnsupportedPtxVersion ||
                         error == cudaErrorInvalidKernelImage;
    return MakeError(machine ? ErrorKind::kUnsupported : ErrorKind::kInvalidArgument, "loading the cubin: {}",
                     CudaText(error));
  }
  for (const auto& line : SplitLines(*table)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string expression = line.substr(0, tab), mangled = line.substr(tab + 1);
    Kernel kernel;
    if (auto error = cudaLibraryGetKernel(&kernel.handle, module->library_, mangled.c_str()); error != cudaSuccess) {
      cudaGetLastError();
      // The build named it: a table that disagrees with its cubin is ksmith's trouble.
      return MakeError(ErrorKind::kInternal, "the cubin has no kernel {} ({}): {}", expression, mangled,
                       CudaText(error));
    }
    // Past the last parameter the query says cudaErrorInvalidValue; that error is this loop's.
    for (size_t index = 0;; ++index) {
      size_t offset = 0, bytes = 0;
      const cudaError_t error = cudaFuncGetParamInfo(reinterpret_cast<const void*>(kernel.handle), index, &offset, &bytes);
      if (error == cudaErrorInvalidValue) break;
      if (error != cudaSuccess) {
        cudaGetLastError();
        return MakeError(ErrorKind::kUnsupported, "reading kernel {}'s parameters: {}", expression, CudaText(error));
      }
      kernel.parameter_bytes.push_back(bytes);
    }
    cudaGetLastError();
    kernel.parameter_kinds = ParameterKinds(Demangle(mangled));
    if (kernel.parameter_kinds.size() != kernel.parameter_bytes.size()) kernel.parameter_kinds.clear();
    module->kernels_[expression] = std::move(kernel);
  }
  return module;
}

Status NvrtcModule::BindTo(const SharedLibrary& library) {
  auto symbol = library.Symbol(kNvrtcLauncherSymbol);
  if (!symbol.ok()) {
    return MakeError(ErrorKind::kInvalidArgument, "the NVRTC-form library has no launcher slot ({})", kNvrtcLauncherSymbol);
  }
  auto* slot = static_cast<LauncherSlot*>(*symbol);
  slot->launch = &NvrtcModule::Launch;
  slot->context = this;
  return {};
}

NvrtcModule::~NvrtcModule() {
  if (library_ != nullptr) cudaLibraryUnload(library_);
}

int NvrtcModule::Launch(void* context, const char* name, const unsigned long long* grid,
                        const unsigned long long* block, unsigned long long shared_bytes, void* stream,
                        void** arguments, const unsigned long long* argument_bytes, const char* argument_kinds,
                        int argument_count) {
  auto* self = static_cast<NvrtcModule*>(context);
  std::string expression = name != nullptr ? std::string(name).substr(0, 1000) : "";
  const auto found = self->kernels_.find(expression);
  if (found == self->kernels_.end()) {
    // The candidate's own text, into a JSON reply: printable ASCII only, and not too much of it.
    for (char& c : expression) {
      if (c < 0x20 || c > 0x7e) c = '?';
    }
    if (expression.size() > 200) expression = expression.substr(0, 200) + "...";
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
    const char want = i < kernel.parameter_kinds.size() ? kernel.parameter_kinds[i] : 'o';
    const char have = argument_kinds != nullptr ? argument_kinds[i] : 'o';
    // A struct, a vector type or __half on either side is checked by size alone.
    if (want != 'o' && have != 'o' && want != have) {
      return Refuse(fmt::format("KSMITH_LAUNCH of {}: argument {} is {}, the kernel's parameter {} is {} (its bits "
                                "would be read as the other; convert it to the parameter's type)",
                                expression, i + 1, KindName(have), i + 1, KindName(want)));
    }
  }
  for (int axis = 0; axis < 3; ++axis) {
    if (grid[axis] > UINT_MAX || block[axis] > UINT_MAX) {
      return Refuse(fmt::format("KSMITH_LAUNCH of {}: a grid or block size of {} does not fit CUDA's unsigned int",
                                expression, std::max(grid[axis], block[axis])));
    }
  }
  // The candidate's calls come from one thread at a time (the worker's): no lock for the grant.
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
