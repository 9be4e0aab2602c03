#include "backends/cuda/worker/device_inputs.h"

#include <algorithm>

namespace ksmith {

GpuElement ElementOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return GpuElement::kFloat32;
    case DType::kFloat16: return GpuElement::kFloat16;
    case DType::kBFloat16: return GpuElement::kBFloat16;
    case DType::kInt32: return GpuElement::kInt32;
  }
  return GpuElement::kFloat32;
}

cudaError_t LaunchDrawnFill(const TensorSlot& slot, void* data, uint64_t count, int case_distribution, uint64_t seed,
                            uint64_t stream_id, cudaStream_t stream) {
  const InputDraw& draw = slot.draw;
  if (draw.integers) {
    return LaunchIntegerFill(data, count, seed, stream_id, draw.integers->low, draw.integers->high, stream);
  }
  return LaunchRandomFill(ElementOf(slot.dtype), data, count, draw.own ? static_cast<int>(*draw.own) : case_distribution,
                          seed, stream_id, stream, draw.nonnegative, static_cast<float>(draw.scale),
                          static_cast<float>(draw.offset));
}

cudaError_t LaunchSlotDraw(const CaseLayout& layout, const TensorSlot& slot, void* data, const CaseDraw& draw,
                           cudaStream_t stream) {
  if (slot.draw.held) {
    return LaunchDrawnFill(slot, data, slot.Elements(), static_cast<int>(Distribution::kNormal), layout.held_seed,
                           slot.parameter, stream);
  }
  return LaunchDrawnFill(slot, data, slot.Elements(), static_cast<int>(draw.distribution), draw.seed, slot.parameter,
                         stream);
}

cudaError_t DrawInputs(const CaseLayout& layout, const std::vector<unsigned char*>& tensors, const CaseDraw& draw,
                       cudaStream_t stream) {
  for (size_t i = 0; i < layout.tensors.size(); ++i) {
    if (layout.tensors[i].output) continue;
    if (auto error = LaunchSlotDraw(layout, layout.tensors[i], tensors.at(i), draw, stream); error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

cudaError_t CountInputChanges(const CaseLayout& layout, const std::vector<unsigned char*>& tensors,
                              const CaseDraw& draw, unsigned char* scratch, unsigned long long* counter,
                              cudaStream_t stream, unsigned long long& changed) {
  changed = 0;
  if (auto error = cudaMemsetAsync(counter, 0, sizeof(*counter), stream); error != cudaSuccess) return error;
  // One input at a time through the one scratch buffer: the stream orders each draw after the
  // comparison before it.
  for (size_t i = 0; i < layout.tensors.size(); ++i) {
    const TensorSlot& slot = layout.tensors[i];
    if (slot.output || slot.bytes == 0) continue;
    if (auto error = LaunchSlotDraw(layout, slot, scratch, draw, stream); error != cudaSuccess) return error;
    if (auto error = LaunchCountDifferences(tensors.at(i), scratch, slot.bytes, counter, stream); error != cudaSuccess) {
      return error;
    }
  }
  if (auto error = cudaMemcpyAsync(&changed, counter, sizeof(changed), cudaMemcpyDeviceToHost, stream);
      error != cudaSuccess) {
    return error;
  }
  return cudaStreamSynchronize(stream);
}

size_t LargestInputBytes(const CaseLayout& layout) {
  size_t largest = 0;
  for (const auto& slot : layout.tensors) {
    if (!slot.output) largest = std::max(largest, slot.bytes);
  }
  return largest;
}

}  // namespace ksmith
