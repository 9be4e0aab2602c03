#include "backends/cuda/cuda_profile.h"

#include "backends/cuda/nvrtc_form.h"

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/profile.h"
#include "core/clock.h"
#include "core/files.h"
#include "eval/cases.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"

namespace ksmith {
namespace {

constexpr auto kProfileTimeout = std::chrono::seconds(180);
constexpr uint64_t kReplaySeed = 0x9e0f11e;
constexpr uint32_t kReplayCanary = 0x5a5a5a5a;

std::string SharedObjectOf(const Verdict& verdict) {
  const StageRecord* build = verdict.FindStage(StageId::kBuild);
  if (build == nullptr || !build->details.build) return {};
  return build->details.build->shared_object.value_or(std::string());
}

// The replay folder: kernel.so (a link to the candidate's), layout.json and arena.bin of the bench case.
Status WriteReplay(const Task& task, const std::filesystem::path& shared_object,
                   const std::filesystem::path& directory, const std::filesystem::path& cache_directory) {
  const Task view = CudaView(task);
  CaseSpec spec{view.bench_shape, view.distributions.front(), kReplaySeed, "bench shape"};
  PreparedCase prepared = PrepareCase(view, spec, 256);
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(prepared.layout));
  if (!memory.ok()) return memory.error();
  GuardedArena arena(prepared.layout, (*memory)->data());
  if (auto status = arena.Prepare(prepared.inputs, kReplayCanary); !status.ok()) return status;
  // A link, not a copy: a generated shim finds what it reads beside the file it was built as
  // (a KernelBench candidate's spec), through the link.
  std::error_code error;
  std::filesystem::create_symlink(std::filesystem::absolute(shared_object), directory / "kernel.so", error);
  if (error) return MakeError(ErrorKind::kIo, "cannot link {}: {}", shared_object.string(), error.message());
  // An NVRTC-form library's device code and kernel table, which the replay loads for it.
  if (const auto cubin = NvrtcDeviceCodeOf(shared_object, cache_directory); !cubin.empty()) {
    for (const std::string_view extension : {kNvrtcCubinExtension, kNvrtcKernelsExtension}) {
      std::filesystem::create_symlink(std::filesystem::path(cubin).replace_extension(extension),
                                      (directory / "kernel").replace_extension(extension), error);
      if (error) return MakeError(ErrorKind::kIo, "cannot link {}'s device code: {}", shared_object.string(), error.message());
    }
  }
  if (auto status = WriteFileAtomic(directory / "layout.json", prepared.layout.ToJson().dump()); !status.ok()) {
    return status;
  }
  return WriteFileAtomic(directory / "arena.bin",
                         std::string(reinterpret_cast<const char*>((*memory)->data()), (*memory)->size()));
}

}  // namespace

void AttachCudaProfile(Verdict& verdict, const Task& task, const std::filesystem::path& worker_executable,
                       const std::filesystem::path& scratch_parent) {
  const auto start = SteadyClock::now();
  StageRecord stage;
  stage.name = StageName(StageId::kProfile);
  stage.outcome = "ok";
  auto note = [&](const std::string& text) {
    stage.details.summary = text;
    stage.seconds = SecondsSince(start);
    verdict.stages.push_back(std::move(stage));
  };
  const std::string shared_object = SharedObjectOf(verdict);
  if (verdict.status != VerdictStatus::kPassed || shared_object.empty()) {
    return note("not profiled: only a candidate that passed verification is replayed under ncu");
  }
  ScopedTempDir directory("profile", scratch_parent, OwnerMark::kMark);
  if (!directory.ok()) return note("not profiled: " + directory.error());
  // The scratch folder is <cache>/scratch (the backend's CacheDirectory).
  if (auto status = WriteReplay(task, shared_object, directory.path(), scratch_parent.parent_path()); !status.ok()) {
    return note("not profiled: " + status.error().message);
  }
  auto kernels = RunProfile({worker_executable.string(), "--replay", directory.path().string()}, kProfileTimeout);
  if (!kernels.ok()) return note("not profiled (timing-only verdict): " + kernels.error().message);
  const auto facts = BottleneckFacts(*kernels);
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& kernel : *kernels) {
    launches.push_back({{"kernel", kernel.kernel}, {"grid", kernel.grid_size}, {"block", kernel.block_size},
                        {"metrics", kernel.metrics}});
  }
  stage.details.profile = ProfileFacts{facts, launches};
  note(facts.empty() ? "ncu ran but reported no facts" : facts.front());
}

}  // namespace ksmith
