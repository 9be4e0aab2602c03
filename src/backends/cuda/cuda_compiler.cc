#include "backends/cuda/cuda_compiler.h"

#include <fmt/format.h>

#include "backends/cuda/nvrtc_form.h"

namespace ksmith {

CudaCompiler::CudaCompiler(NvccCompiler nvcc, Result<NvrtcCompiler> nvrtc) : nvcc_(std::move(nvcc)) {
  if (nvrtc.ok()) {
    nvrtc_.emplace(std::move(nvrtc.value()));
  } else {
    why_no_nvrtc_ = nvrtc.error().message;
  }
}

Result<CudaCompiler> CudaCompiler::Create(std::filesystem::path cache_directory, CudaTarget target,
                                          BuildLimits limits) {
  auto nvcc = NvccCompiler::Create(cache_directory, std::move(target), limits);
  if (!nvcc.ok()) return nvcc.error();
  auto nvrtc = NvrtcCompiler::Create(cache_directory, nvcc->info(), limits);
  return CudaCompiler(std::move(nvcc.value()), std::move(nvrtc));
}

Result<BuildOutput> CudaCompiler::Build(const Task& task, const BuildRequest& request) const {
  if (!IsNvrtcForm(request.source)) return nvcc_.Build(task, request);
  if (!nvrtc_) {
    // This machine's lack, not the candidate's fault: an infrastructure error, not a compile error.
    return MakeError(ErrorKind::kNotFound, "{} is in the NVRTC form (it includes <{}>), which this machine cannot build: {}",
                     request.display_name, kNvrtcFormHeader, why_no_nvrtc_);
  }
  return nvrtc_->Build(task, request);
}

nlohmann::json CudaCompiler::Provenance() const {
  const auto& info = nvcc_.info();
  nlohmann::json provenance = {{"compiler", info.version}, {"flags", info.flags}, {"target", info.target.ToJson()}};
  if (nvrtc_) {
    provenance["nvrtc"] = {{"version", nvrtc_->info().version},
                           {"options", nvrtc_->info().device_options},
                           {"host_compiler", nvrtc_->info().host_version},
                           {"host_flags", nvrtc_->info().host_flags}};
  }
  return provenance;
}

}  // namespace ksmith
