#include "backends/cpu/cpu_backend.h"

#include <utility>

#include "backends/cpu/compiler.h"
#include "backends/cpu/cpu_prompt.h"
#include "backends/cpu/machine.h"
#include "backends/cpu/worker_session.h"
#include "binary/shared_library.h"
#include "compile/build.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "eval/pipeline_steps.h"
#include "sandbox/supervisor.h"

namespace ksmith {
namespace {

// The reference runs in this process (it is trusted code); the candidate and the baseline run
// in the worker.
class CpuSession : public VerificationSession {
 public:
  CpuSession(const Task& task, EvalOptions options, const MachineFacts& machine, const CpuCompiler& compiler,
             Verdict& verdict, uint64_t secret_seed)
      : task_(task), options_(std::move(options)), machine_(machine), compiler_(compiler), verdict_(verdict),
        secret_seed_(secret_seed) {}

  void Run(const std::filesystem::path& candidate, const TrustedBuild& trusted) override {
    // Only the bandwidth is measured again: the FMA peak does not depend on other load.
    auto remeasure = [this] {
      const auto bandwidth = MeasureBandwidthNow(compiler_, machine_.llc_bytes);
      return MeasuredPeaks{bandwidth.ok() ? *bandwidth : 0, 0, 0};
    };
    RunWithHostReference(task_, options_, machine_, verdict_, secret_seed_, candidate, trusted.reference, trusted.baseline,
                         remeasure, WorkerKind{});
  }

 private:
  const Task& task_;
  const EvalOptions options_;
  const MachineFacts& machine_;
  const CpuCompiler& compiler_;
  Verdict& verdict_;
  uint64_t secret_seed_;
};

class CpuBackend : public EvalBackend {
 public:
  CpuBackend(CpuCompiler compiler, MachineFacts machine, std::filesystem::path worker_executable,
             std::filesystem::path scratch_parent)
      : compiler_(std::move(compiler)), machine_(std::move(machine)), worker_executable_(std::move(worker_executable)),
        scratch_parent_(std::move(scratch_parent)) {}

  const BackendTraits& traits() const override { return CpuBackendTraits(); }

  Status Supports(const Task& task) const override {
    if (task.baselines.count(traits().name) == 0) {
      return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no [baseline.cpu] in {}", task.name,
                       task.toml_path.string());
    }
    return {};
  }

  std::string Declaration(const Task& task) const override { return task.signature.Declaration(); }

  std::vector<AuditFinding> AuditSource(const std::string& text, const Task& task) const override {
    return ksmith::AuditSource(text, task);
  }

  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const override {
    return compiler_.Build(task, request);
  }

  Result<std::vector<AuditFinding>> AuditBinary(const BuildOutput& build, const Task& task) const override {
    return AuditBuiltObject(build.shared_object,
                            [&task](const DynamicSymbols& symbols) { return ksmith::AuditBinary(symbols, task); });
  }

  Result<std::pair<BuildRequest, BuildRequest>> TrustedSources(const Task& task) const override {
    return ReadTrustedSources(task, traits(), task.reference_source);
  }

  // The scratch folder is <cache>/scratch (Make*Backend).
  std::filesystem::path CacheDirectory() const override { return scratch_parent_.parent_path(); }
  BuildLimits Limits() const override { return compiler_.limits(); }
  nlohmann::json Provenance() const override {
    return {{"machine",
             {{"hostname", machine_.hostname}, {"cpu", machine_.cpu_model}, {"cores", machine_.cores},
              {"llc_bytes", machine_.llc_bytes}}},
            {"compiler", compiler_.info().version},
            {"flags", compiler_.info().flags}};
  }

  nlohmann::json DeviceFacts() const override { return machine_.ToJson(); }

  std::unique_ptr<VerificationSession> OpenSession(const Task& view, const EvalOptions& options, Verdict& verdict,
                                                   uint64_t secret_seed) const override {
    EvalOptions session_options = options;
    session_options.worker_executable = worker_executable_;
    session_options.scratch_parent = scratch_parent_;
    return std::make_unique<CpuSession>(view, std::move(session_options), machine_, compiler_, verdict, secret_seed);
  }

 private:
  const CpuCompiler compiler_;
  const MachineFacts machine_;
  const std::filesystem::path worker_executable_;
  const std::filesystem::path scratch_parent_;
};

}  // namespace

const BackendTraits& CpuBackendTraits() {
  static const BackendTraits traits = [] {
    BackendTraits made{.name = "cpu",
                       .description = "C++ kernels on this machine's cores (g++, OpenMP)",
                       .source_extension = ".cc",
                       .fence_language = "cpp",
                       .compiler_name = "the compiler",
                       .times_on_host_cores = true};
    made.torch_device = "cpu";
    made.prompt = CpuPrompt();
    return made;
  }();
  return traits;
}

std::filesystem::path DefaultCpuWorkerExecutable() { return HelperExecutable("KSMITH_WORKER", "ksmith-worker"); }

Result<std::unique_ptr<EvalBackend>> MakeCpuBackend(const BackendConfig& config) {
  RemoveStaleBuildFolders(config.cache_directory);
  auto compiler = CpuCompiler::Create(config.cache_directory, config.build_limits);
  if (!compiler.ok()) return compiler.error();
  auto machine = config.measure_facts && !config.build_only ? LoadMachineFacts(*compiler, config.cache_directory, config.refresh_facts)
                                      : Result<MachineFacts>(ProbeMachine());
  if (!machine.ok()) return machine.error();
  const auto worker =
      config.worker_executable.empty() ? DefaultCpuWorkerExecutable() : config.worker_executable;
  return std::unique_ptr<EvalBackend>(std::make_unique<CpuBackend>(
      std::move(compiler.value()), std::move(machine.value()), worker, config.cache_directory / "scratch"));
}

}  // namespace ksmith
