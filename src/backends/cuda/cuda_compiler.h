// The CUDA backend's compiler: a candidate in the NVRTC form (it includes <ksmith/launch.h>,
// backends/cuda/nvrtc_form.h) is built by NVRTC and the host compiler, any other source by nvcc.
// The one place that chooses between them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/cuda/nvcc_compiler.h"
#include "backends/cuda/nvrtc_compiler.h"
#include "compile/build.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

class CudaCompiler {
 public:
  /// Fails only where nvcc does not run; without ksmith-nvrtc, building an NVRTC-form source is
  /// an error (kNotFound) that says why.
  static Result<CudaCompiler> Create(std::filesystem::path cache_directory, CudaTarget target,
                                     BuildLimits limits = {});

  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  const NvccCompiler& nvcc() const { return nvcc_; }
  const BuildLimits& limits() const { return nvcc_.limits(); }
  /// nvcc's version, flags and target, and NVRTC's where it runs.
  nlohmann::json Provenance() const;

 private:
  CudaCompiler(NvccCompiler nvcc, Result<NvrtcCompiler> nvrtc);

  NvccCompiler nvcc_;
  std::optional<NvrtcCompiler> nvrtc_;
  std::string why_no_nvrtc_;
};

}  // namespace ksmith
