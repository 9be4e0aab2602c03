// The cpu backend: C++ kernels built with g++ (backends/cpu/compiler.h), run in a sandboxed
// ksmith-worker on this machine's cores (backends/cpu/worker_session.h).
#pragma once

#include <filesystem>
#include <memory>

#include "core/result.h"
#include "eval/backend.h"

namespace ksmith {

struct BackendConfig;

/// The cpu backend's traits, for the registry.
const BackendTraits& CpuBackendTraits();

/// $KSMITH_WORKER, else ksmith-worker beside the running executable: the CPU worker.
std::filesystem::path DefaultCpuWorkerExecutable();

/// Finds the compiler and this machine's facts (measured once, then cached in the cache folder).
Result<std::unique_ptr<EvalBackend>> MakeCpuBackend(const BackendConfig& config);

}  // namespace ksmith
