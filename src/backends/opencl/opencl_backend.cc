#include "backends/opencl/opencl_backend.h"

#include <utility>

#include <fmt/format.h>

#include "backends/cpu/compiler.h"
#include "backends/cpu/machine.h"
#include "backends/cpu/worker_session.h"
#include "backends/opencl/opencl_compiler.h"
#include "backends/opencl/opencl_form.h"
#include "backends/opencl/opencl_prompt.h"
#include "binary/shared_library.h"
#include "compile/build.h"
#include "core/source_text.h"
#include "eval/backend_registry.h"
#include "eval/pipeline_steps.h"

namespace ksmith {
namespace {

// The reference runs in this process (trusted code built by g++); the candidate and the baseline
// run in ksmith-opencl-worker, driven by the CPU backend's session (backends/cpu/worker_session.h).
class OpenclSession : public VerificationSession {
 public:
  OpenclSession(const Task& task, EvalOptions options, const MachineFacts& machine, WorkerKind kind, Verdict& verdict,
                uint64_t secret_seed)
      : task_(task), options_(std::move(options)), machine_(machine), kind_(std::move(kind)), verdict_(verdict),
        secret_seed_(secret_seed) {}

  void Run(const std::filesystem::path& candidate, const TrustedBuild& trusted) override {
    RunWithHostReference(task_, options_, machine_, verdict_, secret_seed_, candidate, trusted.reference, trusted.baseline,
                         {}, kind_);
  }

 private:
  const Task& task_;
  const EvalOptions options_;
  const MachineFacts& machine_;
  const WorkerKind kind_;
  Verdict& verdict_;
  uint64_t secret_seed_;
};

class OpenclBackend : public EvalBackend {
 public:
  OpenclBackend(CpuCompiler reference_compiler, OpenclCompiler compiler, MachineFacts machine, std::string device,
                std::filesystem::path worker_executable, std::filesystem::path scratch_parent)
      : reference_compiler_(std::move(reference_compiler)), compiler_(std::move(compiler)), machine_(std::move(machine)),
        device_(std::move(device)), worker_executable_(std::move(worker_executable)),
        scratch_parent_(std::move(scratch_parent)) {}

  const BackendTraits& traits() const override { return OpenclBackendTraits(); }

  Status Supports(const Task& task) const override {
    if (task.baselines.count(traits().name) == 0) {
      return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no OpenCL version ([baseline.opencl] in {})", task.name,
                       task.toml_path.string());
    }
    if (auto maps = SignatureMapsToOpencl(task); !maps.ok()) {
      return MakeError(ErrorKind::kInvalidArgument, "task '{}' cannot run on OpenCL: {}", task.name, maps.error().message);
    }
    return {};
  }

  std::string Declaration(const Task& task) const override {
    return KernelDeclaration(task, task.signature.function) + "  // with `// @launch " + task.signature.function +
           " global=(...) local=(...)`";
  }

  std::vector<AuditFinding> AuditSource(const std::string& text, const Task&) const override {
    return AuditOpenclSource(text);
  }

  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const override {
    // The reference is the task's C++ one, in double precision, run by this process.
    if (request.role == KernelRole::kReference) return reference_compiler_.Build(task, request);
    return compiler_.Build(task, request);
  }

  // A program binary is the runtime's own format (PoCL's bitcode and objects, NVIDIA's PTX): what
  // a kernel may do is bounded by OpenCL C, the source audit and the worker's walls.
  Result<std::vector<AuditFinding>> AuditBinary(const BuildOutput&, const Task&) const override {
    return std::vector<AuditFinding>{};
  }

  Result<std::pair<BuildRequest, BuildRequest>> TrustedSources(const Task& task) const override {
    auto sources = ReadTrustedSources(task, traits(), task.reference_source);
    if (sources.ok()) sources->first.display_name = "reference.cc";
    return sources;
  }

  std::filesystem::path CacheDirectory() const override { return scratch_parent_.parent_path(); }
  BuildLimits Limits() const override { return compiler_.limits(); }

  nlohmann::json Provenance() const override {
    return {{"machine", {{"hostname", machine_.hostname}, {"cpu", machine_.cpu_model}, {"cores", machine_.cores}}},
            {"opencl_device", compiler_.device_facts()},
            {"reference_compiler", reference_compiler_.info().version}};
  }

  nlohmann::json DeviceFacts() const override {
    nlohmann::json facts = compiler_.device_facts();
    facts["host"] = machine_.ToJson();
    return facts;
  }

  std::unique_ptr<VerificationSession> OpenSession(const Task& view, const EvalOptions& options, Verdict& verdict,
                                                   uint64_t secret_seed) const override {
    EvalOptions session_options = options;
    session_options.worker_executable = worker_executable_;
    session_options.scratch_parent = scratch_parent_;
    const bool gpu = compiler_.device_facts().value("type", std::string()) == "gpu";
    WorkerKind kind{.backend = traits().name,
                    .setup = {{"device", device_},
                              {"identity", compiler_.device_facts().value("identity", std::string())},
                              {"gpu", gpu}},
                    // A CPU device runs the kernels in the worker's process, where they could reach
                    // its event times: there the evaluator's clock times them, as the CPU's.
                    .worker_clock = gpu,
                    .host_peaks = !gpu};
    return std::make_unique<OpenclSession>(view, std::move(session_options), machine_, std::move(kind), verdict, secret_seed);
  }

 private:
  const CpuCompiler reference_compiler_;
  const OpenclCompiler compiler_;
  const MachineFacts machine_;
  const std::string device_;
  const std::filesystem::path worker_executable_;
  const std::filesystem::path scratch_parent_;
};

}  // namespace

std::vector<AuditFinding> AuditOpenclSource(std::string_view source) {
  static const std::vector<SourceRule> rules = {
      {"inline_assembly", R"(\b(__asm__|__asm|asm)\b)",
       "inline assembly is not OpenCL C: on a CPU device it would run machine code the contract does not allow"},
      {"local_include", R"(^\s*#\s*include\b)", "an OpenCL candidate is one file: #include can read files at build time"},
      // A pasted token or a spliced line can spell a word no line shows (`__as##m__`).
      {"token_pasting", R"(##)", "token pasting (##) can build names the audit cannot read: write them out"},
      {"line_splice", R"(\w\\$)", "a backslash that splits a word across lines hides it from the audit: join the line"},
  };
  return ScanSource(source, StripCommentsAndStrings(source), rules);
}

const BackendTraits& OpenclBackendTraits() {
  static const BackendTraits traits{.name = "opencl",
                                    .description = "OpenCL C kernels on one OpenCL device (PoCL on this CPU, or a GPU's driver)",
                                    .source_extension = ".cl",
                                    .fence_language = "opencl",
                                    .compiler_name = "the OpenCL compiler",
                                    .profiles = false,
                                    .device_key = "opencl_device",
                                    // PoCL runs the kernels on the cores that compile.
                                    .times_on_host_cores = true,
                                    // PoCL's CPU and a GPU's driver may both be there (`ksmith doctor`).
                                    .selects_devices = true,
                                    .prompt = OpenclPrompt()};
  return traits;
}

Result<std::unique_ptr<EvalBackend>> MakeOpenclBackend(const BackendConfig& config) {
  RemoveStaleBuildFolders(config.cache_directory);
  auto reference_compiler = CpuCompiler::Create(config.cache_directory, config.build_limits);
  if (!reference_compiler.ok()) return reference_compiler.error();
  auto devices = ListOpenclDevices();
  if (!devices.ok()) return devices.error();
  if (devices->empty()) {
    return MakeError(ErrorKind::kUnsupported,
                     "no OpenCL device: the OpenCL loader found no platform (install pocl-opencl-icd for this CPU, or "
                     "register a vendor's library in /etc/OpenCL/vendors); `ksmith doctor` lists what it sees");
  }
  // The device PickDevice will choose, named so that the worker and the helper agree.
  size_t index = 0;
  if (!config.device.empty()) {
    try {
      index = std::stoul(config.device);
    } catch (const std::exception&) {
      index = devices->size();
    }
    if (index >= devices->size()) {
      return MakeError(ErrorKind::kInvalidArgument, "OpenCL device '{}' does not exist: choose 0 to {} (`ksmith doctor` lists them)",
                       config.device, devices->size() - 1);
    }
  } else {
    for (size_t i = 0; i < devices->size(); ++i) {
      if ((*devices)[i].value("type", std::string()) == "gpu") {
        index = i;
        break;
      }
    }
  }
  const std::string device = std::to_string(index);
  auto machine = config.measure_facts && !config.build_only ? LoadMachineFacts(*reference_compiler, config.cache_directory, config.refresh_facts)
                                                            : Result<MachineFacts>(ProbeMachine());
  if (!machine.ok()) return machine.error();
  OpenclCompiler compiler(config.cache_directory, device, (*devices)[index], config.build_limits);
  const auto worker = config.worker_executable.empty() ? DefaultOpenclWorkerExecutable() : config.worker_executable;
  return std::unique_ptr<EvalBackend>(std::make_unique<OpenclBackend>(std::move(reference_compiler.value()), std::move(compiler),
                                                                      std::move(machine.value()), device, worker,
                                                                      config.cache_directory / "scratch"));
}

}  // namespace ksmith
