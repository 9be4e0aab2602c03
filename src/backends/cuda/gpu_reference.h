// The task's GPU reference (reference.cu) run outside an evaluation, through
// `ksmith-cuda-worker --replay`, and checked against the CPU reference (reference.cc).
//
// Every CUDA verdict is judged against the GPU reference, every CPU verdict against the CPU one,
// so the two must agree: both compute in double precision, so they may differ only by the order
// of their sums. `ksmith tasks check` and tests/gpu/reference_crosscheck_test.cc both use this.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "binary/shared_library.h"
#include "core/result.h"
#include "eval/cases.h"
#include "task/task.h"

namespace ksmith {

/// The layout the GPU reference writes: the case's, with every output 8 bytes (a double) an
/// element.
CaseLayout ReferenceLayout(const CaseLayout& layout);

/// Two double-precision sums of the same terms in different orders agree far closer than this.
inline constexpr double kReferenceAgreement = 1e-9;
/// Cases whose tensors, guards included, exceed this many 4-byte words are not cross-checked:
/// the CPU reference is slow on them, and the small shapes already cover every code path.
inline constexpr int64_t kMaxCrossCheckWords = int64_t{1} << 22;

/// Why the GPU reference cannot run here ("no GPU (/dev/nvidiactl is missing)",
/// "ksmith-cuda-worker was not built (...)"); empty when it can.
std::string WhyNoGpu(const std::filesystem::path& worker);

/// Runs `reference_object` (reference.cu built by NvccCompiler with KernelRole::kReference) once
/// on `prepared`'s inputs, in a fresh folder under `scratch_parent`. One vector of doubles per
/// output tensor, in output order. Errors: the worker failed or returned a malformed arena.
Result<std::vector<std::vector<double>>> RunGpuReference(const std::filesystem::path& worker,
                                                         const std::filesystem::path& reference_object,
                                                         const PreparedCase& prepared,
                                                         const std::filesystem::path& scratch_parent);

/// The first element of `gpu` that differs from `cpu` by more than
/// kReferenceAgreement * (|cpu_i| + rms(cpu)), described with the count of such elements; empty
/// when none does.
std::string DescribeDisagreement(const std::vector<double>& gpu, const std::vector<double>& cpu);

struct GpuReferenceAgreement {
  int cases = 0;             // shape x distribution pairs compared
  std::string disagreement;  // empty when every case agreed; else the first case that did not
};

/// Compares the two references on every dev shape of `view` (the task's CudaView) and every
/// eval shape within kMaxCrossCheckWords, under every distribution. Stops at the first case that
/// disagrees. Errors are the machine's (the worker failed), never the task's.
Result<GpuReferenceAgreement> CrossCheckGpuReference(const Task& view, KernelEntry cpu_reference,
                                                     const std::filesystem::path& gpu_reference_object,
                                                     const std::filesystem::path& worker,
                                                     const std::filesystem::path& scratch_parent);

}  // namespace ksmith
