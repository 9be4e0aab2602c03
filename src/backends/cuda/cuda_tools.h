// The cuda backend's part of `ksmith doctor` and of `ksmith tasks check`.
#pragma once

#include <filesystem>
#include <memory>

#include "eval/backend_tools.h"

namespace ksmith {

/// nvcc's and NVRTC's versions, the toolkit's folders, the GPU's facts and measured peaks (or
/// why there is no GPU).
DoctorSection CudaDoctor(const std::filesystem::path& cache_directory, bool refresh);

/// Builds each task's reference.cu with nvcc and runs it on the GPU against the CPU reference.
std::unique_ptr<ReferenceCrossCheck> MakeCudaReferenceCrossCheck(const std::filesystem::path& cache_directory);

}  // namespace ksmith
