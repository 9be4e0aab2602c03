#include "backends/cuda/gpu_reference.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/files.h"
#include "core/subprocess.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr auto kReplayTimeout = std::chrono::seconds(120);
constexpr uint32_t kReplayCanary = 0x5a5a5a5a;
constexpr size_t kGuardBytes = 256;
constexpr uint64_t kCrossCheckSeed = 0x5eed0000u;

std::vector<std::string> WorkerEnvironment() {
  std::vector<std::string> environment;
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    if (const char* value = std::getenv(name); value && *value) {
      environment.push_back(std::string(name) + "=" + value);
    }
  }
  return environment;
}

}  // namespace

CaseLayout ReferenceLayout(const CaseLayout& layout) {
  CaseLayout wide = layout;
  for (auto& slot : wide.tensors) {
    if (!slot.output) continue;
    slot.bytes = slot.Elements() * sizeof(double);
    slot.dtype = DType::kFloat32;  // poisoned and sized in 4-byte words, read back as doubles
  }
  return wide;
}

std::string WhyNoGpu(const fs::path& worker) {
  std::error_code error;
  if (!fs::exists("/dev/nvidiactl", error)) return "no GPU (/dev/nvidiactl is missing)";
  if (!fs::exists(worker, error)) {
    return fmt::format("{} was not built (no nvcc when ksmith was configured)", worker.string());
  }
  return {};
}

Result<std::vector<std::vector<double>>> RunGpuReference(const fs::path& worker, const fs::path& reference_object,
                                                         const PreparedCase& prepared, const fs::path& scratch_parent) {
  const CaseLayout layout = ReferenceLayout(prepared.layout);
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(layout));
  if (!memory.ok()) return memory.error();
  GuardedArena arena(layout, (*memory)->data());
  if (auto status = arena.Prepare(prepared.inputs, kReplayCanary); !status.ok()) return status.error();
  // The replay folder: kernel.so, layout.json and arena.bin in; result.bin (the arena after the call) out.
  ScopedTempDir directory("gpu-reference", scratch_parent, OwnerMark::kMark);
  if (!directory.ok()) return MakeError(ErrorKind::kIo, "the GPU reference's scratch folder: {}", directory.error());
  std::error_code error;
  fs::copy_file(reference_object, directory.path() / "kernel.so", error);
  if (error) return MakeError(ErrorKind::kIo, "cannot copy {}: {}", reference_object.string(), error.message());
  if (auto status = WriteFileAtomic(directory.path() / "layout.json", layout.ToJson().dump()); !status.ok()) {
    return status.error();
  }
  const std::string arena_bytes(reinterpret_cast<const char*>((*memory)->data()), (*memory)->size());
  if (auto status = WriteFileAtomic(directory.path() / "arena.bin", arena_bytes); !status.ok()) return status.error();

  SpawnOptions options;
  options.argv = {worker.string(), "--replay", directory.path().string()};
  options.environment = WorkerEnvironment();
  auto run = RunCommand(options, kReplayTimeout);
  if (!run.ok()) return run.error();
  if (!run->succeeded()) {
    return MakeError(ErrorKind::kInternal, "{} --replay: {}: {}", worker.filename().string(), run->Describe(), run->output);
  }
  auto result = ReadFile(directory.path() / "result.bin");
  if (!result.ok()) return result.error();
  if (result->size() != (*memory)->size()) {
    return MakeError(ErrorKind::kProtocol, "the replay returned {} bytes, expected {}", result->size(), (*memory)->size());
  }
  std::memcpy((*memory)->data(), result->data(), result->size());
  std::vector<std::vector<double>> outputs;
  for (const auto& slot : layout.tensors) {
    if (!slot.output) continue;
    const auto* values = static_cast<const double*>(arena.pointers()[slot.parameter]);
    outputs.emplace_back(values, values + slot.bytes / sizeof(double));
  }
  return outputs;
}

std::string DescribeDisagreement(const std::vector<double>& gpu, const std::vector<double>& cpu) {
  if (gpu.size() != cpu.size()) return fmt::format("{} elements from the GPU, {} from the CPU", gpu.size(), cpu.size());
  double squares = 0;
  for (double value : cpu) squares += value * value;
  const double rms = cpu.empty() ? 0 : std::sqrt(squares / static_cast<double>(cpu.size()));
  size_t disagreements = 0;
  size_t first = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    // Written so that a NaN on either side disagrees.
    if (!(std::abs(gpu[i] - cpu[i]) <= kReferenceAgreement * (std::abs(cpu[i]) + rms))) {
      if (disagreements++ == 0) first = i;
    }
  }
  if (disagreements == 0) return {};
  return fmt::format("{} of {} elements differ by more than {:g} relative; first at element {}: GPU {:.17g}, CPU {:.17g}",
                     disagreements, cpu.size(), kReferenceAgreement, first, gpu[first], cpu[first]);
}

Result<GpuReferenceAgreement> CrossCheckGpuReference(const Task& view, KernelEntry cpu_reference,
                                                     const fs::path& gpu_reference_object, const fs::path& worker,
                                                     const fs::path& scratch_parent) {
  std::vector<DimValues> shapes = view.dev_shapes;
  for (const auto& shape : view.eval_shapes) {
    if (static_cast<int64_t>(MakeLayout(view, shape, 0).SnapshotBytes() / sizeof(float)) <= kMaxCrossCheckWords) {
      shapes.push_back(shape);
    }
  }
  GpuReferenceAgreement agreement;
  for (const auto& shape : shapes) {
    for (const auto distribution : view.distributions) {
      const CaseSpec spec{shape, distribution, kCrossCheckSeed + static_cast<uint64_t>(agreement.cases),
                          fmt::format("{}, {}", view.FormatShape(shape), DistributionName(distribution))};
      PreparedCase prepared = PrepareCase(view, spec, kGuardBytes);
      ComputeExpected(view, cpu_reference, prepared);
      auto gpu = RunGpuReference(worker, gpu_reference_object, prepared, scratch_parent);
      if (!gpu.ok()) return Error{gpu.error().kind, spec.label + ": " + gpu.error().message};
      ++agreement.cases;
      for (size_t output = 0; output < prepared.expected.size(); ++output) {
        const std::string why = output < gpu->size() ? DescribeDisagreement((*gpu)[output], prepared.expected[output])
                                                      : "the GPU reference returned fewer outputs";
        if (!why.empty()) {
          agreement.disagreement = fmt::format("{}: output '{}': {}", spec.label, view.outputs[output].name, why);
          return agreement;
        }
      }
    }
  }
  return agreement;
}

}  // namespace ksmith
