// The cuda backend: CUDA C++ kernels built with nvcc (backends/cuda/nvcc_compiler.h) and run on
// an NVIDIA GPU by two ksmith-cuda-worker processes, one of which never loads untrusted code
// (backends/cuda/cuda_session.h).
#pragma once

#include <memory>

#include "core/result.h"
#include "eval/backend.h"
#include "task/task.h"

namespace ksmith {

struct BackendConfig;

/// The task as the GPU sees it: its [cuda] eval and bench shapes in place of the CPU ones.
Task CudaView(const Task& task);

/// The cuda backend's traits, for the registry.
const BackendTraits& CudaBackendTraits();

/// Checks that the worker is built and that there is a GPU, resolves the target architecture
/// (config.arch, else the GPU found) and starts measuring the GPU's facts in the background.
/// kInvalidArgument errors are the user's (a bad arch); others are this machine's.
Result<std::unique_ptr<EvalBackend>> MakeCudaBackend(const BackendConfig& config);

}  // namespace ksmith
