#include "backends/opencl/runtime/cl_runtime.h"

#include <map>

#include <fmt/format.h>

namespace ksmith {
namespace {

std::string DeviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string PlatformString(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  clGetPlatformInfo(platform, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

template <typename T>
T DeviceValue(cl_device_id device, cl_device_info what) {
  T value{};
  clGetDeviceInfo(device, what, sizeof(value), &value, nullptr);
  return value;
}

}  // namespace

std::string ClErrorName(cl_int code) {
  switch (code) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND (-1)";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES (-5)";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY (-6)";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE (-11)";
    case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET (-13)";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE (-30)";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM (-32)";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY (-42)";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS (-43)";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME (-46)";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS (-52)";
    case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION (-53)";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE (-54)";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE (-55)";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE (-63)";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (-1001)";
    default: return fmt::format("OpenCL error {}", code);
  }
}

Error ClError(const std::string& call, cl_int code) {
  return MakeError(ErrorKind::kIo, "{} failed: {}", call, ClErrorName(code));
}

std::vector<ClDevice> AllDevices() {
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) return {};
  std::vector<cl_platform_id> platforms(platform_count);
  clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  std::vector<ClDevice> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    for (cl_device_id id : ids) devices.push_back({platform, id});
  }
  return devices;
}

bool IsGpu(const ClDevice& device) {
  return (DeviceValue<cl_device_type>(device.device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
}

size_t MaxWorkGroupSize(const ClDevice& device) { return DeviceValue<size_t>(device.device, CL_DEVICE_MAX_WORK_GROUP_SIZE); }

size_t GlobalCacheBytes(const ClDevice& device) {
  return static_cast<size_t>(DeviceValue<cl_ulong>(device.device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE));
}

size_t BaseAddressAlignBytes(const ClDevice& device) {
  return DeviceValue<cl_uint>(device.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
}

std::string DeviceIdentity(const ClDevice& device) {
  return PlatformString(device.platform, CL_PLATFORM_NAME) + " / " + DeviceString(device.device, CL_DEVICE_NAME);
}

namespace {

// Each device's identity, the second and later of the same platform and name numbered (" #1"):
// two loaders may list the platforms in other orders, never a platform's devices.
std::vector<std::string> Identities(const std::vector<ClDevice>& devices) {
  std::vector<std::string> identities;
  std::map<std::string, size_t> seen;  // devices of each platform and name so far
  for (const auto& device : devices) {
    const std::string identity = DeviceIdentity(device);
    const size_t earlier = seen[identity]++;
    identities.push_back(earlier == 0 ? identity : fmt::format("{} #{}", identity, earlier));
  }
  return identities;
}

}  // namespace

Result<ClDevice> PickDevice(const std::string& which, const std::string& identity) {
  const auto devices = AllDevices();
  if (devices.empty()) {
    return MakeError(ErrorKind::kUnsupported,
                     "no OpenCL device: the OpenCL loader found no platform (install pocl-opencl-icd for this CPU, or "
                     "register a vendor's library in /etc/OpenCL/vendors)");
  }
  if (!identity.empty()) {
    const auto identities = Identities(devices);
    for (size_t i = 0; i < devices.size(); ++i) {
      if (identities[i] == identity) return devices[i];
    }
    return MakeError(ErrorKind::kUnsupported, "no OpenCL device '{}' here (the OpenCL loader lists {} devices)", identity,
                     devices.size());
  }
  if (which.empty()) {
    for (const auto& device : devices) {
      if (IsGpu(device)) return device;
    }
    return devices.front();
  }
  size_t index = 0;
  try {
    index = std::stoul(which);
  } catch (const std::exception&) {
    return MakeError(ErrorKind::kInvalidArgument, "OpenCL device '{}' is not an index (0 to {})", which, devices.size() - 1);
  }
  if (index >= devices.size()) {
    return MakeError(ErrorKind::kInvalidArgument, "OpenCL device {} does not exist: this machine has {} (0 to {})", index,
                     devices.size(), devices.size() - 1);
  }
  return devices[index];
}

nlohmann::json DeviceFacts(const ClDevice& device, size_t index, const std::string& identity) {
  return {{"index", index},
          {"identity", identity},
          {"platform", PlatformString(device.platform, CL_PLATFORM_NAME)},
          {"name", DeviceString(device.device, CL_DEVICE_NAME)},
          {"vendor", DeviceString(device.device, CL_DEVICE_VENDOR)},
          {"version", DeviceString(device.device, CL_DEVICE_VERSION)},
          {"driver", DeviceString(device.device, CL_DRIVER_VERSION)},
          {"type", IsGpu(device) ? "gpu" : "cpu"},
          {"compute_units", DeviceValue<cl_uint>(device.device, CL_DEVICE_MAX_COMPUTE_UNITS)},
          {"clock_mhz", DeviceValue<cl_uint>(device.device, CL_DEVICE_MAX_CLOCK_FREQUENCY)},
          {"global_memory_bytes", DeviceValue<cl_ulong>(device.device, CL_DEVICE_GLOBAL_MEM_SIZE)},
          {"local_memory_bytes", DeviceValue<cl_ulong>(device.device, CL_DEVICE_LOCAL_MEM_SIZE)},
          {"global_cache_bytes", GlobalCacheBytes(device)},
          {"max_work_group_size", MaxWorkGroupSize(device)},
          {"base_address_align_bytes", BaseAddressAlignBytes(device)}};
}

nlohmann::json DevicesJson() {
  nlohmann::json devices = nlohmann::json::array();
  const auto all = AllDevices();
  const auto identities = Identities(all);
  for (size_t i = 0; i < all.size(); ++i) devices.push_back(DeviceFacts(all[i], i, identities[i]));
  return devices;
}

Result<std::unique_ptr<ClContext>> ClContext::Create(const ClDevice& device) {
  std::unique_ptr<ClContext> created(new ClContext());
  created->device_ = device;
  cl_int status = CL_SUCCESS;
  const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  created->context_ = clCreateContext(properties, 1, &device.device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) return ClError("clCreateContext", status);
  created->queue_ = clCreateCommandQueue(created->context_, device.device, CL_QUEUE_PROFILING_ENABLE, &status);
  if (status != CL_SUCCESS) return ClError("clCreateCommandQueue", status);
  return created;
}

ClContext::~ClContext() {
  if (queue_ != nullptr) clReleaseCommandQueue(queue_);
  if (context_ != nullptr) clReleaseContext(context_);
}

namespace {

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

Result<std::unique_ptr<ClProgram>> ClProgram::FromSource(const ClContext& context, const std::string& source,
                                                         const std::string& options, std::string* log) {
  std::unique_ptr<ClProgram> created(new ClProgram());
  created->device_ = context.device().device;
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int status = CL_SUCCESS;
  created->program_ = clCreateProgramWithSource(context.context(), 1, &text, &length, &status);
  if (status != CL_SUCCESS) return ClError("clCreateProgramWithSource", status);
  status = clBuildProgram(created->program_, 1, &created->device_, options.c_str(), nullptr, nullptr);
  if (log != nullptr) *log = BuildLog(created->program_, created->device_);
  if (status != CL_SUCCESS) return ClError("clBuildProgram", status);
  return created;
}

Result<std::unique_ptr<ClProgram>> ClProgram::FromBinary(const ClContext& context, const std::string& binary) {
  std::unique_ptr<ClProgram> created(new ClProgram());
  created->device_ = context.device().device;
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  const size_t length = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  created->program_ = clCreateProgramWithBinary(context.context(), 1, &created->device_, &length, &bytes, &binary_status, &status);
  if (status != CL_SUCCESS) return ClError("clCreateProgramWithBinary", status);
  if (binary_status != CL_SUCCESS) return ClError("clCreateProgramWithBinary (the binary)", binary_status);
  status = clBuildProgram(created->program_, 1, &created->device_, "", nullptr, nullptr);
  if (status != CL_SUCCESS) {
    return MakeError(ErrorKind::kIo, "loading the program binary: {}: {}", ClErrorName(status),
                     BuildLog(created->program_, created->device_));
  }
  return created;
}

ClProgram::~ClProgram() {
  for (auto& [name, kernel] : kernels_) clReleaseKernel(kernel);
  if (program_ != nullptr) clReleaseProgram(program_);
}

Result<std::string> ClProgram::Binary() const {
  size_t size = 0;
  if (cl_int status = clGetProgramInfo(program_, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr); status != CL_SUCCESS) {
    return ClError("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", status);
  }
  std::string binary(size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(binary.data());
  if (cl_int status = clGetProgramInfo(program_, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr); status != CL_SUCCESS) {
    return ClError("clGetProgramInfo(CL_PROGRAM_BINARIES)", status);
  }
  return binary;
}

Result<cl_kernel> ClProgram::Kernel(const std::string& name) {
  for (const auto& [known, kernel] : kernels_) {
    if (known == name) return kernel;
  }
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program_, name.c_str(), &status);
  if (status == CL_INVALID_KERNEL_NAME) {
    return MakeError(ErrorKind::kInvalidArgument, "the program has no __kernel named '{}'", name);
  }
  if (status != CL_SUCCESS) return ClError(fmt::format("clCreateKernel({})", name), status);
  kernels_.emplace_back(name, kernel);
  return kernel;
}

Result<ClBuffer> ClBuffer::Create(const ClContext& context, size_t bytes) {
  ClBuffer buffer;
  cl_int status = CL_SUCCESS;
  buffer.memory_ = clCreateBuffer(context.context(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &status);
  if (status != CL_SUCCESS) return ClError(fmt::format("clCreateBuffer({} bytes)", bytes), status);
  buffer.bytes_ = bytes;
  return buffer;
}

Result<ClBuffer> ClBuffer::Region(const ClBuffer& parent, size_t origin, size_t bytes) {
  ClBuffer buffer;
  cl_int status = CL_SUCCESS;
  const cl_buffer_region region{origin, std::max<size_t>(bytes, 1)};
  buffer.memory_ = clCreateSubBuffer(parent.get(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  if (status != CL_SUCCESS) return ClError(fmt::format("clCreateSubBuffer(origin {}, {} bytes)", origin, bytes), status);
  buffer.bytes_ = bytes;
  return buffer;
}

ClBuffer& ClBuffer::operator=(ClBuffer&& other) noexcept {
  if (this != &other) {
    if (memory_ != nullptr) clReleaseMemObject(memory_);
    memory_ = other.memory_;
    bytes_ = other.bytes_;
    other.memory_ = nullptr;
  }
  return *this;
}

ClBuffer::~ClBuffer() {
  if (memory_ != nullptr) clReleaseMemObject(memory_);
}

}  // namespace ksmith
