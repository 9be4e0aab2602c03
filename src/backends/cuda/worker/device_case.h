// One case's memory on both sides: the arena the evaluator shares (guards, inputs, poisoned
// outputs, laid out by sandbox/layout.h) and its mirror on the GPU at fixed device addresses.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"

namespace ksmith {

/// The one symbol a built kernel exports (backends/cuda/nvcc_compiler.h).
using CudaEntry = void (*)(void* const* pointers, const int64_t* scalars, void* stream);
/// A trusted baseline's optional kKernelFinishSymbol (binary/shared_library.h).
using CudaFinish = void (*)(void* stream);

class DeviceCase {
 public:
  /// Allocates the device mirror and pins the shared memory when the driver allows it.
  static Result<std::unique_ptr<DeviceCase>> Create(CaseLayout layout, std::unique_ptr<SharedMemory> memory);
  ~DeviceCase();
  DeviceCase(const DeviceCase&) = delete;
  DeviceCase& operator=(const DeviceCase&) = delete;

  /// Host arena -> device (guards, inputs and poison, byte for byte).
  cudaError_t Upload(cudaStream_t copy_stream);
  /// Device -> host arena.
  cudaError_t Download(cudaStream_t copy_stream);
  /// Host arena -> device, the guard zones alone (the inputs drawn and the outputs poisoned on the
  /// device), queued on `copy_stream`: the caller synchronizes it.
  cudaError_t UploadGuards(cudaStream_t copy_stream);
  /// Device -> host arena: the guard zones and the outputs, not the inputs' bytes.
  cudaError_t DownloadGuardsAndOutputs(cudaStream_t copy_stream);

  void* const* device_pointers() const { return device_pointers_.data(); }
  const int64_t* scalars() const { return layout_.scalars.data(); }
  const CaseLayout& layout() const { return layout_; }
  unsigned char* device_base() const { return device_; }
  const unsigned char* host_base() const { return memory_->data(); }
  size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }
  /// Device address of slot `index`'s tensor.
  unsigned char* DeviceTensor(size_t index) const;
  /// Every slot's device address, in slot order.
  std::vector<unsigned char*> DeviceTensors() const;

 private:
  DeviceCase() = default;
  CaseLayout layout_;
  std::unique_ptr<SharedMemory> memory_;
  std::unique_ptr<GuardedArena> host_;
  unsigned char* device_ = nullptr;
  size_t bytes_ = 0;
  bool pinned_ = false;
  std::vector<void*> device_pointers_;   // per signature parameter; null for scalars
  std::vector<size_t> tensor_offsets_;   // per slot, from the arena's base

  // Copies [offset, offset + bytes) of the arena in `kind`'s direction, on `copy_stream`.
  cudaError_t CopyRange(size_t offset, size_t bytes, cudaMemcpyKind kind, cudaStream_t copy_stream);
};

}  // namespace ksmith
