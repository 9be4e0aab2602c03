// The opencl backend: OpenCL C kernels (backends/opencl/opencl_form.h) built by the device's
// OpenCL runtime (ksmith-oclc) and run by ksmith-opencl-worker on one OpenCL device: PoCL on this
// machine's CPU, or a GPU's driver. The reference is the task's double-precision CPU reference,
// run in this process; the baseline is the task's `[baseline.opencl]`, an OpenCL program.
#pragma once

#include <memory>

#include "core/result.h"
#include "eval/backend.h"

namespace ksmith {

struct BackendConfig;

const BackendTraits& OpenclBackendTraits();

/// Finds ksmith-oclc, the worker and the device (BackendConfig::device: an index into every
/// platform's devices; empty: the first GPU, else the first device).
Result<std::unique_ptr<EvalBackend>> MakeOpenclBackend(const BackendConfig& config);

/// The OpenCL contract's source rules.
std::vector<AuditFinding> AuditOpenclSource(std::string_view source);

}  // namespace ksmith
