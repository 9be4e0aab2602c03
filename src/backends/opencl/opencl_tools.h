// The opencl backend's part of `ksmith doctor`.
#pragma once

#include <filesystem>

#include "eval/backend_tools.h"

namespace ksmith {

/// The OpenCL platforms and devices ksmith-oclc sees, or why there are none.
DoctorSection OpenclDoctor(const std::filesystem::path& cache_directory, bool refresh);

}  // namespace ksmith
