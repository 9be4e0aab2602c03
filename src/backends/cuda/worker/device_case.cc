#include "backends/cuda/worker/device_case.h"

#include <fmt/format.h>

namespace ksmith {

Result<std::unique_ptr<DeviceCase>> DeviceCase::Create(CaseLayout layout,
                                                       std::unique_ptr<SharedMemory> memory) {
  std::unique_ptr<DeviceCase> result(new DeviceCase());
  result->bytes_ = GuardedArena::RequiredBytes(layout);
  if (memory->size() < result->bytes_) {
    return MakeError(ErrorKind::kProtocol, "shared arena of {} bytes is smaller than its layout ({})",
                     memory->size(), result->bytes_);
  }
  result->host_ = std::make_unique<GuardedArena>(layout, memory->data());
  if (auto error = cudaMalloc(&result->device_, result->bytes_); error != cudaSuccess) {
    return MakeError(ErrorKind::kIo, "cudaMalloc of {} bytes for a case: {}", result->bytes_,
                     cudaGetErrorString(error));
  }
  // Pinned, the copies run at full PCIe speed; pageable they still work, only slower.
  result->pinned_ = cudaHostRegister(memory->data(), result->bytes_, cudaHostRegisterDefault) == cudaSuccess;
  if (!result->pinned_) cudaGetLastError();
  const unsigned char* host_base = memory->data();
  const auto* host_pointers = result->host_->pointers();
  result->device_pointers_.assign(layout.scalars.size(), nullptr);
  for (const auto& slot : layout.tensors) {
    const auto offset = static_cast<size_t>(static_cast<const unsigned char*>(host_pointers[slot.parameter]) - host_base);
    result->tensor_offsets_.push_back(offset);
    result->device_pointers_[slot.parameter] = result->device_ + offset;
  }
  result->layout_ = std::move(layout);
  result->memory_ = std::move(memory);
  return result;
}

DeviceCase::~DeviceCase() {
  if (pinned_) cudaHostUnregister(memory_->data());
  if (device_) cudaFree(device_);
}

cudaError_t DeviceCase::Upload(cudaStream_t copy_stream) {
  if (auto error = CopyRange(0, bytes_, cudaMemcpyHostToDevice, copy_stream); error != cudaSuccess) return error;
  return cudaStreamSynchronize(copy_stream);
}

cudaError_t DeviceCase::Download(cudaStream_t copy_stream) {
  if (auto error = CopyRange(0, bytes_, cudaMemcpyDeviceToHost, copy_stream); error != cudaSuccess) return error;
  return cudaStreamSynchronize(copy_stream);
}

unsigned char* DeviceCase::DeviceTensor(size_t index) const { return device_ + tensor_offsets_.at(index); }

std::vector<unsigned char*> DeviceCase::DeviceTensors() const {
  std::vector<unsigned char*> tensors;
  for (const size_t offset : tensor_offsets_) tensors.push_back(device_ + offset);
  return tensors;
}

cudaError_t DeviceCase::CopyRange(size_t offset, size_t bytes, cudaMemcpyKind kind, cudaStream_t copy_stream) {
  unsigned char* host = memory_->data() + offset;
  unsigned char* device = device_ + offset;
  return kind == cudaMemcpyHostToDevice ? cudaMemcpyAsync(device, host, bytes, kind, copy_stream)
                                        : cudaMemcpyAsync(host, device, bytes, kind, copy_stream);
}

cudaError_t DeviceCase::UploadGuards(cudaStream_t copy_stream) {
  const size_t guard = layout_.guard_bytes;
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const size_t tensor = tensor_offsets_[i];
    for (const size_t offset : {tensor - guard, tensor + layout_.tensors[i].bytes}) {
      if (auto error = CopyRange(offset, guard, cudaMemcpyHostToDevice, copy_stream); error != cudaSuccess) return error;
    }
  }
  return cudaSuccess;
}

cudaError_t DeviceCase::DownloadGuardsAndOutputs(cudaStream_t copy_stream) {
  const size_t guard = layout_.guard_bytes;
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const TensorSlot& slot = layout_.tensors[i];
    const size_t tensor = tensor_offsets_[i];
    cudaError_t error = cudaSuccess;
    if (slot.output) {
      error = CopyRange(tensor - guard, slot.bytes + 2 * guard, cudaMemcpyDeviceToHost, copy_stream);
    } else {
      error = CopyRange(tensor - guard, guard, cudaMemcpyDeviceToHost, copy_stream);
      if (error == cudaSuccess) error = CopyRange(tensor + slot.bytes, guard, cudaMemcpyDeviceToHost, copy_stream);
    }
    if (error != cudaSuccess) return error;
  }
  return cudaStreamSynchronize(copy_stream);
}

}  // namespace ksmith
