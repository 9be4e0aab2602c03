#include "backends/cuda/cuda_backend.h"

#include <cstdint>
#include <future>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/cuda/cuda_audit.h"
#include "backends/cuda/cuda_compiler.h"
#include "backends/cuda/cuda_profile.h"
#include "backends/cuda/cuda_prompt.h"
#include "backends/cuda/cuda_session.h"
#include "backends/cuda/gpu_facts.h"
#include "backends/cuda/worker_spares.h"
#include "compile/build.h"
#include "core/strings.h"
#include "eval/backend_registry.h"
#include "eval/gpu_gate.h"
#include "eval/pipeline_steps.h"

namespace ksmith {
namespace {

// One case's tensors at `shape` [bytes]; 0 where the shape does not evaluate.
int64_t CaseBytes(const Task& task, const DimValues& shape) {
  const auto full = task.WithDerivedDims(shape);
  if (!full.ok()) return 0;
  int64_t bytes = 0;
  for (const auto* tensors : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *tensors) bytes += task.Elements(tensor, *full) * DTypeBytes(tensor.dtype);
  }
  return bytes;
}

// Owns the options the session reads (the session keeps a reference to them).
class CudaSessionHolder : public VerificationSession {
 public:
  CudaSessionHolder(const Task& task, EvalOptions options, std::shared_future<std::optional<GpuFacts>> gpu,
                    Verdict& verdict, uint64_t secret_seed, CudaWorkerSpares* spares)
      : options_(std::move(options)), large_(CaseBytes(task, task.bench_shape) > GpuGate::kLargeCaseBytes),
        spares_(spares) {
    // Started now (or ahead, a spare), from the pipeline's thread, so that the CUDA contexts are
    // created while the candidate builds.
    CudaWorkers workers = spares_ ? spares_->Take(options_) : CudaWorkers::Start(options_);
    if (workers.started_ahead_s > 0) verdict.provenance["workers_started_ahead_s"] = workers.started_ahead_s;
    session_ = std::make_unique<CudaSession>(task, options_, std::move(gpu), verdict, secret_seed, std::move(workers));
  }

  ~CudaSessionHolder() override {
    session_.reset();
    // Where the spare could not be started at Take; not for a cancelled run (shutting down).
    if (spares_ && !options_.Cancelled()) spares_->Refill(options_);
  }

  void TrustedReady(const TrustedBuild& trusted) override {
    // A large verification's cases start in its turn (Run), not while its candidate compiles.
    if (!large_) session_->StartCases(trusted.reference);
    session_->WarmCandidateWorker(trusted.baseline);
  }

  void Run(const std::filesystem::path& candidate, const TrustedBuild& trusted) override {
    TakeTurnIfLarge();
    session_->SetSecondBaseline(trusted);
    session_->Run(candidate, trusted.baseline, trusted.reference);
  }

 private:
  // Before anything of the cases reaches the device; held until this holder (and with it the
  // session's workers) is gone. A null gate: this verification is alone on its GPU.
  void TakeTurnIfLarge() {
    if (turn_.owns_lock() || options_.gpu_gate == nullptr || !large_) return;
    turn_ = std::unique_lock(options_.gpu_gate->large_verifications());
  }

  const EvalOptions options_;
  bool large_ = false;
  CudaWorkerSpares* const spares_;  // null: every verification starts its own workers
  std::unique_lock<std::mutex> turn_;  // declared before session_: released after the workers end
  std::unique_ptr<CudaSession> session_;
};

class CudaBackend : public EvalBackend {
 public:
  CudaBackend(CudaCompiler compiler, std::shared_future<std::optional<GpuFacts>> gpu,
              std::filesystem::path worker_executable, std::filesystem::path scratch_parent, std::string device,
              bool spare_workers)
      : compiler_(std::move(compiler)), gpu_(std::move(gpu)), worker_executable_(std::move(worker_executable)),
        scratch_parent_(std::move(scratch_parent)), device_(std::move(device)),
        spares_(spare_workers ? std::make_unique<CudaWorkerSpares>() : nullptr) {}

  const BackendTraits& traits() const override { return CudaBackendTraits(); }

  Status Supports(const Task& task) const override {
    if (!task.cuda || task.baselines.count(traits().name) == 0) {
      return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no CUDA version (no [cuda] table or [baseline.cuda] in {})",
                       task.name, task.toml_path.string());
    }
    return {};
  }

  Task View(const Task& task) const override { return CudaView(task); }

  std::string Declaration(const Task& task) const override { return task.CudaDeclaration(); }

  std::vector<AuditFinding> AuditSource(const std::string& text, const Task& task) const override {
    return AuditCudaSource(text, task);
  }

  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const override {
    return compiler_.Build(task, request);
  }

  Result<std::vector<AuditFinding>> AuditBinary(const BuildOutput& build, const Task& task) const override {
    const bool nvrtc_form = !build.device_code.empty();
    return AuditBuiltObject(build.shared_object, [&task, nvrtc_form](const DynamicSymbols& symbols) {
      return AuditCudaBinary(symbols, task, nvrtc_form);
    });
  }

  Result<std::pair<BuildRequest, BuildRequest>> TrustedSources(const Task& task) const override {
    if (!task.cuda) return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no [cuda] reference", task.name);
    return ReadTrustedSources(task, traits(), task.cuda->reference_source);
  }

  // The scratch folder is <cache>/scratch (Make*Backend).
  std::filesystem::path CacheDirectory() const override { return scratch_parent_.parent_path(); }
  BuildLimits Limits() const override { return compiler_.limits(); }
  nlohmann::json Provenance() const override {
    return compiler_.Provenance();
  }

  nlohmann::json DeviceFacts() const override {
    const auto& facts = gpu_.get();
    return facts ? facts->ToJson() : nlohmann::json::object();
  }

  void Profile(Verdict& verdict, const Task& view) const override {
    AttachCudaProfile(verdict, view, worker_executable_, scratch_parent_);
  }

  std::unique_ptr<VerificationSession> OpenSession(const Task& view, const EvalOptions& options, Verdict& verdict,
                                                   uint64_t secret_seed) const override {
    EvalOptions session_options = options;
    session_options.worker_executable = worker_executable_;
    session_options.scratch_parent = scratch_parent_;
    if (!device_.empty()) session_options.worker_environment.push_back("CUDA_VISIBLE_DEVICES=" + device_);
    return std::make_unique<CudaSessionHolder>(view, std::move(session_options), gpu_, verdict, secret_seed,
                                               spares_ ? spares_.get() : nullptr);
  }

 private:
  const CudaCompiler compiler_;
  std::shared_future<std::optional<GpuFacts>> gpu_;
  const std::filesystem::path worker_executable_;
  const std::filesystem::path scratch_parent_;
  const std::string device_;
  const std::unique_ptr<CudaWorkerSpares> spares_;  // null where spares are off
};

// Audits and builds only: nvcc and cuobjdump, with no worker and no GPU (a machine with the
// toolkit alone). Its facts are none, and it is never asked for a session.
Result<std::unique_ptr<EvalBackend>> MakeCudaBuildBackend(const BackendConfig& config,
                                                          const std::filesystem::path& worker) {
  auto target = ResolveCudaTarget(config.arch.empty() ? std::nullopt : std::optional<std::string>(config.arch));
  if (!target.ok()) return Error{ErrorKind::kInvalidArgument, target.error().message};
  RemoveStaleBuildFolders(config.cache_directory);
  auto compiler = CudaCompiler::Create(config.cache_directory, *target, config.build_limits);
  if (!compiler.ok()) return compiler.error();
  std::promise<std::optional<GpuFacts>> none;
  none.set_value(std::nullopt);
  return std::unique_ptr<EvalBackend>(std::make_unique<CudaBackend>(std::move(compiler.value()), none.get_future().share(),
                                                                    worker, config.cache_directory / "scratch",
                                                                    config.device, false));
}

}  // namespace

Task CudaView(const Task& task) {
  Task view = task;
  if (task.cuda) {
    view.eval_shapes = task.cuda->eval_shapes;
    view.bench_shape = task.cuda->bench_shape;
  }
  return view;
}

const BackendTraits& CudaBackendTraits() {
  static const BackendTraits traits{.name = "cuda",
                                    .description = "CUDA C++ kernels on an NVIDIA GPU (nvcc, or NVRTC for the NVRTC form)",
                                    .source_extension = ".cu",
                                    .fence_language = "cuda",
                                    .compiler_name = "nvcc or NVRTC",
                                    .other_source_extensions = {".cc", ".cpp"},
                                    .profiles = true,
                                    .reports_kernel_resources = true,
                                    .device_key = "gpu",
                                    .times_on_host_cores = false,
                                    .default_verifications_per_device = 3,
                                    .selects_devices = true,
                                    .torch_device = "cuda",
                                    .prompt = CudaPrompt()};
  return traits;
}

Result<std::unique_ptr<EvalBackend>> MakeCudaBackend(const BackendConfig& config) {
  const auto worker = config.worker_executable.empty() ? DefaultCudaWorkerExecutable() : config.worker_executable;
  if (config.build_only) return MakeCudaBuildBackend(config, worker);
  if (!std::filesystem::exists(worker)) {
    return MakeError(ErrorKind::kNotFound,
                     "the cuda backend is not built here: {} is missing (nvcc was not found when ksmith was configured)",
                     worker.string());
  }
  std::error_code error;
  if (!std::filesystem::exists("/dev/nvidiactl", error)) {
    return MakeError(ErrorKind::kUnsupported,
                     "no NVIDIA GPU here (/dev/nvidiactl is missing): --backend cuda needs one; --backend cpu runs on this machine");
  }
  auto target = ResolveCudaTarget(config.arch.empty() ? std::nullopt : std::optional<std::string>(config.arch));
  if (!target.ok()) return Error{ErrorKind::kInvalidArgument, target.error().message};
  RemoveStaleBuildFolders(config.cache_directory);
  auto compiler = CudaCompiler::Create(config.cache_directory, *target, config.build_limits);
  if (!compiler.ok()) return compiler.error();
  // Measured once per GPU and cached; measured in the background while the first candidates build.
  auto gpu = std::async(std::launch::async,
                        [worker, directory = config.cache_directory, refresh = config.refresh_facts,
                         report = config.report_error]() -> std::optional<GpuFacts> {
                          try {
                            auto facts = LoadGpuFacts(worker, directory, refresh);
                            if (facts.ok()) return std::move(facts.value());
                            if (report) report("reading the GPU's facts failed: " + facts.error().message);
                          } catch (const std::exception& exception) {
                            if (report) report(std::string("reading the GPU's facts failed: ") + exception.what());
                          }
                          return std::nullopt;
                        }).share();
  return std::unique_ptr<EvalBackend>(std::make_unique<CudaBackend>(std::move(compiler.value()), std::move(gpu), worker,
                                                                    config.cache_directory / "scratch", config.device,
                                                                    config.spare_workers));
}

}  // namespace ksmith
