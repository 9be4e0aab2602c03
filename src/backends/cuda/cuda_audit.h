// The candidate contract for CUDA (docs/design.md): the audit of a CUDA candidate's source and of the
// shared object nvcc built from it.
//
// Same rules as the CPU audit (eval/audit.h) where they apply: no files, network, processes,
// environment, signals, exit, host threads, include tricks or clocks. The differences:
// - inline `asm` is allowed: PTX in device code is ordinary CUDA; host machine code is still
//   checked, because the caller runs the CPU instruction scan (FindInstructions with
//   ForbiddenInstructions(), then AuditInstructions) on the built .so as it is;
// - the CUDA runtime and its device-side headers are allowed (cuda_runtime.h, cuda_fp16.h,
//   cuda_bf16.h, cooperative_groups, mma.h, cuda/pipeline, cuda/barrier, cub/...);
// - the driver API (cuda.h, cu* calls), profiler/NVML/CUPTI, runtime compilation, and the
//   runtime calls that reset or switch the device, touch the context (cudaCtx*), load code,
//   share memory with other processes or read event timings are forbidden; so is defining a
//   function named like a CUDA API;
// - library headers and libraries (cuBLAS, cuDNN, cuFFT, cuSPARSE, cuSOLVER, cuRAND's host API,
//   NCCL, CUTLASS/CuTe, host BLAS) need the task's `allowed_libraries` to name them;
// - Thrust is forbidden unless allowed ("thrust"): its algorithms run on the legacy default
//   stream and synchronize (work outside the `stream` the candidate was given) and its host
//   paths compute on the CPU. CUB is allowed: its primitives are device code or take a stream.
#pragma once

#include <string_view>
#include <vector>

#include "binary/elf_symbols.h"
#include "eval/audit.h"
#include "task/task.h"

namespace ksmith {

/// Comments and string literals do not count (except PTX timers inside asm strings); a finding
/// names the line. Quoted includes of bare header names are judged like <...> ones: the kernel
/// is compiled alone in its folder, so they can only reach the system's headers.
std::vector<AuditFinding> AuditCudaSource(std::string_view text, const Task& task);

/// `symbols` of the built candidate (ReadDynamicSymbols): the libraries it links, what it
/// imports, what it exports (only ksmith_entry, standard-library template instances and, for a
/// library NVRTC built (`nvrtc_form`), ksmith's launcher slot), and every symbol it defines,
/// hidden ones included, named like a CUDA/CUPTI/NVML API function.
std::vector<AuditFinding> AuditCudaBinary(const DynamicSymbols& symbols, const Task& task, bool nvrtc_form = false);

}  // namespace ksmith
