// A case's inputs drawn where they are used: on the device, by the generator the host's FillSlot
// runs (gpu_kernels.h, bit for bit), so that a checked call needs no inputs copied in, and after
// it no inputs copied out: the worker draws them again and compares on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "backends/cuda/worker/gpu_kernels.h"
#include "sandbox/layout.h"

namespace ksmith {

/// The comparison kernels' element type of `dtype`.
GpuElement ElementOf(DType dtype);

/// One input drawn on the device as the host's FillInput draws it: integers from their range,
/// other values from the tensor's own distribution or `case_distribution`.
cudaError_t LaunchDrawnFill(const TensorSlot& slot, void* data, uint64_t count, int case_distribution, uint64_t seed,
                            uint64_t stream_id, cudaStream_t stream);

/// Input slot `slot` of `layout` into `data` as CaseLayout::FillSlot draws it under `draw` (a held
/// input from the layout's held seed).
cudaError_t LaunchSlotDraw(const CaseLayout& layout, const TensorSlot& slot, void* data, const CaseDraw& draw,
                           cudaStream_t stream);

/// Every input of `layout` into its tensor (`tensors`: the device address of each slot).
cudaError_t DrawInputs(const CaseLayout& layout, const std::vector<unsigned char*>& tensors, const CaseDraw& draw,
                       cudaStream_t stream);

/// Sets `changed` to the 8-byte words in which the inputs differ from a fresh draw, made in
/// `scratch` (at least as large as the largest input); `counter` is one device word. Waits for
/// `stream`.
cudaError_t CountInputChanges(const CaseLayout& layout, const std::vector<unsigned char*>& tensors,
                              const CaseDraw& draw, unsigned char* scratch, unsigned long long* counter,
                              cudaStream_t stream, unsigned long long& changed);

/// The bytes of the largest input of `layout` (0 without inputs).
size_t LargestInputBytes(const CaseLayout& layout);

}  // namespace ksmith
