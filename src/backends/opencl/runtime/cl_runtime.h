// The OpenCL calls ksmith makes, for the two programs that link the OpenCL loader: the build
// helper (ksmith-oclc) and the worker (ksmith-opencl-worker). ksmith itself never links it, so
// it runs where no OpenCL is installed; it asks the helper (`ksmith-oclc devices`).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// "CL_OUT_OF_RESOURCES (-5)".
std::string ClErrorName(cl_int code);

/// An error naming the call and its code.
Error ClError(const std::string& call, cl_int code);

struct ClDevice {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};

/// Every device of every platform, in platform order: what a device index counts.
std::vector<ClDevice> AllDevices();

/// `which`: an index into AllDevices(), or empty for the first GPU (else the first device). With
/// `identity` (DevicesJson's: "platform / name", " #k" for the k-th other device of that platform
/// and name), the device of that identity instead, wherever it is listed: two OpenCL loaders may
/// list the platforms in different orders.
/// Errors: no OpenCL platform (the ICD loader found none: PoCL not installed, or a vendor's .icd
/// not registered), an index past the end, an identity not found.
Result<ClDevice> PickDevice(const std::string& which, const std::string& identity = "");

/// "Portable Computing Language / pthread-skylake-avx512-AMD EPYC".
std::string DeviceIdentity(const ClDevice& device);

/// The device's facts: index, identity, platform, name, vendor, version, type, compute units,
/// clock, memory, cache, work-group limit, sub-buffer alignment.
nlohmann::json DeviceFacts(const ClDevice& device, size_t index, const std::string& identity);

/// Every device, as DeviceFacts.
nlohmann::json DevicesJson();

bool IsGpu(const ClDevice& device);
size_t MaxWorkGroupSize(const ClDevice& device);
/// The device's cache of global memory (a GPU's L2, a CPU's last level) [bytes].
size_t GlobalCacheBytes(const ClDevice& device);
/// The alignment a sub-buffer's origin needs [bytes].
size_t BaseAddressAlignBytes(const ClDevice& device);

/// A context and one in-order queue with profiling, on one device.
class ClContext {
 public:
  static Result<std::unique_ptr<ClContext>> Create(const ClDevice& device);
  ~ClContext();
  ClContext(const ClContext&) = delete;
  ClContext& operator=(const ClContext&) = delete;

  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  const ClDevice& device() const { return device_; }

 private:
  ClContext() = default;
  ClDevice device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

/// A built program and its kernels by name.
class ClProgram {
 public:
  /// Builds `source` with `options`; on a compile error, the error's message is the build log.
  static Result<std::unique_ptr<ClProgram>> FromSource(const ClContext& context, const std::string& source,
                                                       const std::string& options, std::string* log);
  /// Loads a binary that FromSource's program gave (Binary()).
  static Result<std::unique_ptr<ClProgram>> FromBinary(const ClContext& context, const std::string& binary);
  ~ClProgram();
  ClProgram(const ClProgram&) = delete;
  ClProgram& operator=(const ClProgram&) = delete;

  Result<std::string> Binary() const;
  /// The kernel called `name`, created once and kept.
  Result<cl_kernel> Kernel(const std::string& name);

 private:
  ClProgram() = default;
  cl_device_id device_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<std::pair<std::string, cl_kernel>> kernels_;
};

/// A device buffer, released with it.
class ClBuffer {
 public:
  static Result<ClBuffer> Create(const ClContext& context, size_t bytes);
  /// A view of [origin, origin + bytes) of `parent` (origin aligned to BaseAddressAlignBytes).
  static Result<ClBuffer> Region(const ClBuffer& parent, size_t origin, size_t bytes);
  ClBuffer() = default;
  ClBuffer(ClBuffer&& other) noexcept : memory_(other.memory_), bytes_(other.bytes_) { other.memory_ = nullptr; }
  ClBuffer& operator=(ClBuffer&& other) noexcept;
  ~ClBuffer();

  cl_mem get() const { return memory_; }
  size_t bytes() const { return bytes_; }

 private:
  cl_mem memory_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace ksmith
