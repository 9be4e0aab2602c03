// Why the device-kernel tests cannot run here, or nothing: they skip, saying so, without a GPU.
#pragma once

#include <filesystem>
#include <string>

#include <cuda_runtime.h>

namespace ksmith {

inline std::string WhyNoGpu() {
  if (!std::filesystem::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return "the CUDA runtime sees no GPU";
  return {};
}

}  // namespace ksmith
