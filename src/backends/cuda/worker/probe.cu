#include "backends/cuda/worker/probe.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ksmith {
namespace {

using Json = nlohmann::json;
using WallClock = std::chrono::steady_clock;

// Sizes and repetition counts keep the whole probe near one second on an H100 (most of it CUDA
// and cuBLAS initialization) and under three on slower parts.
constexpr size_t kCopyMaxBytes = size_t{1} << 30;  // far beyond any L2: DRAM, not cache, is timed
constexpr int kCopyRepetitions = 10;
// FMA kernel: kFmaChains independent chains per thread hide the FMA latency; unrolling the loop
// kFmaUnroll times keeps the loop counter and branch under 1% of issue slots.
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 16;
constexpr int kFmaIterations = 1 << 13;  // about 10 ms per launch on an H100
constexpr int kFmaWarmupIterations = 64;
constexpr int kFmaThreadsPerBlock = 256;
constexpr int kFmaRepetitions = 5;
constexpr int kGemmMaxSize = 8192;  // m = n = k
constexpr int kGemmMinSize = 2048;
constexpr int kGemmRepetitions = 10;
constexpr int kFillThreadsPerBlock = 256;

double SecondsSince(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

std::string CudaErrorText(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

// Collects failures as text instead of stopping: a probe that cannot run cuBLAS should still
// report the bandwidth it measured.
class Errors {
 public:
  bool Ok(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return true;
    list_.push_back(std::string(what) + ": " + CudaErrorText(status));
    return false;
  }
  bool Ok(cublasStatus_t status, const char* what) {
    if (status == CUBLAS_STATUS_SUCCESS) return true;
    list_.push_back(std::string(what) + ": " + cublasGetStatusName(status) + ": " +
                    cublasGetStatusString(status));
    return false;
  }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::vector<std::string> list_;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (pointer_ != nullptr) cudaFree(pointer_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cudaError_t Allocate(size_t bytes) { return cudaMalloc(&pointer_, bytes); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }

 private:
  void* pointer_ = nullptr;
};

class Stream {
 public:
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaError_t Create() { return cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Events {
 public:
  ~Events() {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  cudaError_t Create(int count) {
    for (int i = 0; i < count; ++i) {
      cudaEvent_t event = nullptr;
      const cudaError_t status = cudaEventCreate(&event);
      if (status != cudaSuccess) return status;
      events_.push_back(event);
    }
    return cudaSuccess;
  }
  cudaEvent_t operator[](size_t index) const { return events_[index]; }

 private:
  std::vector<cudaEvent_t> events_;
};

struct Timings {
  std::vector<double> milliseconds;  // one per repetition

  double best_ms() const { return *std::min_element(milliseconds.begin(), milliseconds.end()); }
  double median_ms() const {
    std::vector<double> sorted = milliseconds;
    std::sort(sorted.begin(), sorted.end());
    const size_t middle = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted[middle] : 0.5 * (sorted[middle - 1] + sorted[middle]);
  }
};

// Runs `enqueue` once as a warm-up, then `repetitions` times, each between its own pair of events.
// All repetitions are queued back to back and synchronized once, so host gaps never enter a
// sample. Returns no timings when anything failed (the reason is in `errors`).
template <typename Enqueue>
Timings TimeRepetitions(cudaStream_t stream, int repetitions, Enqueue enqueue, const char* what,
                        Errors& errors) {
  Timings timings;
  Events events;
  if (!errors.Ok(events.Create(2 * repetitions), "cudaEventCreate")) return timings;
  if (!enqueue(/*warmup=*/true)) return timings;
  for (int i = 0; i < repetitions; ++i) {
    if (!errors.Ok(cudaEventRecord(events[2 * i], stream), "cudaEventRecord")) return timings;
    if (!enqueue(/*warmup=*/false)) return timings;
    if (!errors.Ok(cudaEventRecord(events[2 * i + 1], stream), "cudaEventRecord")) return timings;
  }
  if (!errors.Ok(cudaStreamSynchronize(stream), what)) return timings;
  for (int i = 0; i < repetitions; ++i) {
    float elapsed_ms = 0;
    if (!errors.Ok(cudaEventElapsedTime(&elapsed_ms, events[2 * i], events[2 * i + 1]),
                   "cudaEventElapsedTime")) {
      timings.milliseconds.clear();
      return timings;
    }
    timings.milliseconds.push_back(elapsed_ms);
  }
  return timings;
}

__global__ void FmaKernel(float multiplier, float addend, int iterations, float* sink) {
  float accumulators[kFmaChains];
#pragma unroll
  for (int chain = 0; chain < kFmaChains; ++chain) {
    accumulators[chain] = threadIdx.x * 1e-3f + chain;
  }
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int step = 0; step < kFmaUnroll; ++step) {
#pragma unroll
      for (int chain = 0; chain < kFmaChains; ++chain) {
        accumulators[chain] = fmaf(accumulators[chain], multiplier, addend);
      }
    }
  }
  float sum = 0;
#pragma unroll
  for (int chain = 0; chain < kFmaChains; ++chain) sum += accumulators[chain];
  // Never true for the arguments passed, but the compiler cannot know: the chains stay live.
  if (sum == -1.0f) sink[threadIdx.x] = sum;
}

// Uniform values in [-1, 1) from a hash of the index: GEMM power draw (and so the clock under the
// power cap) depends on the data, and zeros would flatter the tensor rate.
__global__ void FillBf16Kernel(__nv_bfloat16* data, size_t count, uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B9u ^ seed;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    data[i] = __float2bfloat16(static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

Json MeasureCopy(cudaStream_t stream, size_t free_bytes, Errors& errors) {
  const auto start = WallClock::now();
  // Two buffers; leave a quarter of free memory alone for the driver and the other probes.
  const size_t bytes = std::min(kCopyMaxBytes, (free_bytes / 4) & ~size_t{0xFFFF});
  DeviceBuffer source, destination;
  if (!errors.Ok(source.Allocate(bytes), "cudaMalloc (copy source)") ||
      !errors.Ok(destination.Allocate(bytes), "cudaMalloc (copy destination)") ||
      !errors.Ok(cudaMemsetAsync(source.as<void>(), 1, bytes, stream), "cudaMemsetAsync") ||
      !errors.Ok(cudaMemsetAsync(destination.as<void>(), 0, bytes, stream), "cudaMemsetAsync")) {
    return nullptr;
  }
  const Timings timings = TimeRepetitions(
      stream, kCopyRepetitions,
      [&](bool) {
        return errors.Ok(cudaMemcpyAsync(destination.as<void>(), source.as<void>(), bytes,
                                         cudaMemcpyDeviceToDevice, stream),
                         "cudaMemcpyAsync");
      },
      "device-to-device copy", errors);
  if (timings.milliseconds.empty()) return nullptr;
  const double moved_bytes = 2.0 * static_cast<double>(bytes);  // read once, written once
  return {{"bytes", bytes},
          {"repetitions", kCopyRepetitions},
          {"best_ms", timings.best_ms()},
          {"median_ms", timings.median_ms()},
          {"best_gbps", moved_bytes / (timings.best_ms() * 1e-3) / 1e9},
          {"median_gbps", moved_bytes / (timings.median_ms() * 1e-3) / 1e9},
          {"seconds", SecondsSince(start)}};
}

Json MeasureFma(cudaStream_t stream, int sm_count, Errors& errors) {
  const auto start = WallClock::now();
  int blocks_per_sm = 0;
  if (!errors.Ok(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, FmaKernel,
                                                               kFmaThreadsPerBlock, 0),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor")) {
    return nullptr;
  }
  // Exactly one full wave: every SM busy, no tail of half-empty SMs.
  const int blocks = sm_count * std::max(blocks_per_sm, 1);
  DeviceBuffer sink;
  if (!errors.Ok(sink.Allocate(kFmaThreadsPerBlock * sizeof(float)), "cudaMalloc (fma sink)")) {
    return nullptr;
  }
  const float multiplier = 0.999999f;
  const float addend = 1e-7f;
  const Timings timings = TimeRepetitions(
      stream, kFmaRepetitions,
      [&](bool warmup) {
        FmaKernel<<<blocks, kFmaThreadsPerBlock, 0, stream>>>(
            multiplier, addend, warmup ? kFmaWarmupIterations : kFmaIterations, sink.as<float>());
        return errors.Ok(cudaGetLastError(), "FmaKernel launch");
      },
      "fp32 FMA kernel", errors);
  if (timings.milliseconds.empty()) return nullptr;
  const double flops = 2.0 * kFmaChains * kFmaUnroll * static_cast<double>(kFmaIterations) *
                       blocks * kFmaThreadsPerBlock;
  return {{"blocks", blocks},
          {"threads_per_block", kFmaThreadsPerBlock},
          {"flops", flops},
          {"repetitions", kFmaRepetitions},
          {"best_ms", timings.best_ms()},
          {"median_ms", timings.median_ms()},
          {"best_tflops", flops / (timings.best_ms() * 1e-3) / 1e12},
          {"median_tflops", flops / (timings.median_ms() * 1e-3) / 1e12},
          {"seconds", SecondsSince(start)}};
}

class CublasHandle {
 public:
  ~CublasHandle() {
    if (handle_ != nullptr) cublasDestroy(handle_);
  }
  cublasStatus_t Create() { return cublasCreate(&handle_); }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

Json MeasureBf16Gemm(cudaStream_t stream, size_t free_bytes, Errors& errors) {
  const auto start = WallClock::now();
  // Three n x n BF16 matrices; halve n until they fit in half of free memory.
  int n = kGemmMaxSize;
  while (n > kGemmMinSize && 3 * sizeof(__nv_bfloat16) * size_t(n) * n > free_bytes / 2) n /= 2;
  const size_t count = size_t(n) * n;
  const size_t bytes = count * sizeof(__nv_bfloat16);
  DeviceBuffer a, b, c;
  if (!errors.Ok(a.Allocate(bytes), "cudaMalloc (gemm A)") ||
      !errors.Ok(b.Allocate(bytes), "cudaMalloc (gemm B)") ||
      !errors.Ok(c.Allocate(bytes), "cudaMalloc (gemm C)")) {
    return nullptr;
  }
  const int fill_blocks = 1024;
  FillBf16Kernel<<<fill_blocks, kFillThreadsPerBlock, 0, stream>>>(a.as<__nv_bfloat16>(), count, 1);
  FillBf16Kernel<<<fill_blocks, kFillThreadsPerBlock, 0, stream>>>(b.as<__nv_bfloat16>(), count, 2);
  if (!errors.Ok(cudaGetLastError(), "FillBf16Kernel launch")) return nullptr;
  CublasHandle handle;
  if (!errors.Ok(handle.Create(), "cublasCreate") ||
      !errors.Ok(cublasSetStream(handle.get(), stream), "cublasSetStream")) {
    return nullptr;
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // The first call also loads cuBLAS's kernels: TimeRepetitions's warm-up absorbs it.
  const Timings timings = TimeRepetitions(
      stream, kGemmRepetitions,
      [&](bool) {
        return errors.Ok(
            cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.as<void>(),
                         CUDA_R_16BF, n, b.as<void>(), CUDA_R_16BF, n, &beta, c.as<void>(),
                         CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
      },
      "bf16 GEMM", errors);
  if (timings.milliseconds.empty()) return nullptr;
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  return {{"m", n},
          {"n", n},
          {"k", n},
          {"library", "cublasGemmEx (BF16 in/out, CUBLAS_COMPUTE_32F)"},
          {"repetitions", kGemmRepetitions},
          {"best_ms", timings.best_ms()},
          {"median_ms", timings.median_ms()},
          {"best_tflops", flops / (timings.best_ms() * 1e-3) / 1e12},
          {"median_tflops", flops / (timings.median_ms() * 1e-3) / 1e12},
          {"seconds", SecondsSince(start)}};
}

std::string VersionText(int version) {  // 13000 -> "13.0"
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The kernel module's version ("580.159.03"): what `nvidia-smi` calls the driver version. The
// runtime only knows the CUDA version the driver supports.
std::string KernelModuleVersion() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(file, line)) return "";
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    if (!word.empty() && word.front() >= '0' && word.front() <= '9' &&
        word.find('.') != std::string::npos) {
      return word;
    }
  }
  return "";
}

std::string UuidText(const cudaUUID_t& uuid) {
  static constexpr int kGroupEnds[] = {4, 6, 8, 10};  // dashes after these bytes: 8-4-4-4-12
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (std::find(std::begin(kGroupEnds), std::end(kGroupEnds), i) != std::end(kGroupEnds)) {
      text += '-';
    }
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
  }
  return text;
}

}  // namespace

Json DescribeGpu(int device) {
  int device_count = 0;
  cudaError_t status = cudaGetDeviceCount(&device_count);
  if (status != cudaSuccess) {
    std::string error = CudaErrorText(status);
    // Without a driver the runtime says "driver version is insufficient": say what is missing.
    if (!std::ifstream("/proc/driver/nvidia/version")) {
      error += " (no NVIDIA kernel driver is loaded: /proc/driver/nvidia/version is missing)";
    }
    return {{"error", error}};
  }
  if (device < 0 || device >= device_count) {
    return {{"error", "device " + std::to_string(device) + " does not exist (" +
                          std::to_string(device_count) + " CUDA devices)"}};
  }
  cudaDeviceProp properties{};
  status = cudaGetDeviceProperties(&properties, device);
  if (status != cudaSuccess) return {{"error", "cudaGetDeviceProperties: " + CudaErrorText(status)}};
  std::string failure;
  auto attribute = [&](cudaDeviceAttr which, const char* name) -> int64_t {
    int value = 0;
    const cudaError_t result = cudaDeviceGetAttribute(&value, which, device);
    if (result != cudaSuccess && failure.empty()) {
      failure = std::string("cudaDeviceGetAttribute(") + name + "): " + CudaErrorText(result);
    }
    return value;
  };
  const int64_t sm_clock_khz = attribute(cudaDevAttrClockRate, "ClockRate");
  const int64_t memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, "MemoryClockRate");
  const int64_t bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, "GlobalMemoryBusWidth");
  Json json = {
      {"device", device},
      {"name", properties.name},
      {"uuid", UuidText(properties.uuid)},
      {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
      {"sm_count", attribute(cudaDevAttrMultiProcessorCount, "MultiProcessorCount")},
      {"max_threads_per_sm", attribute(cudaDevAttrMaxThreadsPerMultiProcessor, "MaxThreadsPerMultiProcessor")},
      {"shared_memory_per_block_default_bytes", attribute(cudaDevAttrMaxSharedMemoryPerBlock, "MaxSharedMemoryPerBlock")},
      {"shared_memory_per_block_bytes", attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, "MaxSharedMemoryPerBlockOptin")},
      {"shared_memory_per_sm_bytes", attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, "MaxSharedMemoryPerMultiprocessor")},
      {"registers_per_sm", attribute(cudaDevAttrMaxRegistersPerMultiprocessor, "MaxRegistersPerMultiprocessor")},
      {"l2_bytes", attribute(cudaDevAttrL2CacheSize, "L2CacheSize")},
      {"persisting_l2_max_bytes", attribute(cudaDevAttrMaxPersistingL2CacheSize, "MaxPersistingL2CacheSize")},
      {"memory_bytes", static_cast<uint64_t>(properties.totalGlobalMem)},
      {"memory_bus_width_bits", bus_width_bits},
      {"sm_clock_max_mhz", sm_clock_khz / 1000},
      {"memory_clock_mhz", memory_clock_khz / 1000},
      // Double data rate: two transfers per memory clock (nvbench and Triton use the same formula).
      {"theoretical_bandwidth_gbps", 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8) / 1e9},
      {"ecc_enabled", attribute(cudaDevAttrEccEnabled, "EccEnabled") != 0},
  };
  if (!failure.empty()) return {{"error", failure}};
  char pci_bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(pci_bus_id, sizeof(pci_bus_id), device) == cudaSuccess) {
    json["pci_bus_id"] = pci_bus_id;
  }
  int driver_version = 0;
  int runtime_version = 0;
  cudaDriverGetVersion(&driver_version);
  cudaRuntimeGetVersion(&runtime_version);
  const std::string module_version = KernelModuleVersion();
  json["driver_version"] = module_version.empty() ? VersionText(driver_version) : module_version;
  json["driver_cuda_version"] = VersionText(driver_version);
  json["runtime_version"] = VersionText(runtime_version);
  return json;
}

Json MeasureGpuPeaks(int device) {
  const auto start = WallClock::now();
  Errors errors;
  Json peaks = Json::object();
  auto finish = [&]() {
    peaks["errors"] = errors.list();
    peaks["seconds"] = SecondsSince(start);
    return peaks;
  };
  int sm_count = 0;
  if (!errors.Ok(cudaSetDevice(device), "cudaSetDevice") ||
      !errors.Ok(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device),
                 "cudaDeviceGetAttribute")) {
    return finish();
  }
  Stream stream;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (!errors.Ok(stream.Create(), "cudaStreamCreate") ||
      !errors.Ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo")) {
    return finish();
  }
  // Each measurement frees its buffers before the next one allocates.
  if (Json copy = MeasureCopy(stream.get(), free_bytes, errors); !copy.is_null()) peaks["copy"] = copy;
  if (Json fma = MeasureFma(stream.get(), sm_count, errors); !fma.is_null()) peaks["fp32_fma"] = fma;
  if (Json gemm = MeasureBf16Gemm(stream.get(), free_bytes, errors); !gemm.is_null()) {
    peaks["bf16_gemm"] = gemm;
  }
  // A failed launch can leave an error behind; clear it so that the caller's next call is clean.
  cudaGetLastError();
  return finish();
}

}  // namespace ksmith
