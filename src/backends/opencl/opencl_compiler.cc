#include "backends/opencl/opencl_compiler.h"

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "backends/opencl/opencl_form.h"
#include "compile/build_command.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/landlock.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace ksmith {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kBuildVersion = "opencl-build-1";
constexpr auto kBuildTimeout = std::chrono::seconds(120);
constexpr auto kListTimeout = std::chrono::milliseconds(30'000);

// The helper's environment: PATH for the runtime's linker, and where PoCL keeps what it builds.
std::vector<std::string> HelperEnvironment(const fs::path& pocl_cache) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> environment = {std::string("PATH=") + (path ? path : "/usr/bin:/bin"), "LC_ALL=C",
                                          "POCL_CACHE_DIR=" + pocl_cache.string()};
  // Which loader it links (the one ksmith's other processes find) and which vendors that reads.
  for (const char* variable : {"LD_LIBRARY_PATH", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH"}) {
    if (const char* value = std::getenv(variable); value && *value) environment.push_back(fmt::format("{}={}", variable, value));
  }
  return environment;
}

// The last line of the helper's output that is a JSON object (a runtime may print before it).
nlohmann::json LastJsonLine(const std::string& output) {
  const auto lines = SplitLines(output);
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (Trim(*line).starts_with("{") || Trim(*line).starts_with("[")) {
      auto parsed = nlohmann::json::parse(*line, nullptr, false);
      if (!parsed.is_discarded()) return parsed;
    }
  }
  return nlohmann::json();
}

// What the helper checks each launched kernel against.
nlohmann::json Contract(const Task& task, const OpenclPlan& plan) {
  std::set<std::string> kernels;
  for (const auto& launch : plan.launches) kernels.insert(launch.kernel);
  nlohmann::json arguments = nlohmann::json::array();
  for (const auto& parameter : task.signature.parameters) {
    arguments.push_back({{"name", parameter.name}, {"type", OpenclType(parameter.base_type)}, {"pointer", parameter.is_pointer}});
  }
  return {{"kernels", kernels}, {"arguments", arguments}, {"options", "-cl-kernel-arg-info"}};
}

}  // namespace

fs::path DefaultOclcExecutable() { return HelperExecutable("KSMITH_OCLC", "ksmith-oclc"); }
fs::path DefaultOpenclWorkerExecutable() { return HelperExecutable("KSMITH_OPENCL_WORKER", "ksmith-opencl-worker"); }

Result<nlohmann::json> ListOpenclDevices() {
  const fs::path helper = DefaultOclcExecutable();
  if (!fs::exists(helper)) {
    return MakeError(ErrorKind::kNotFound, "{} is not built: install ocl-icd-opencl-dev and opencl-c-headers and rebuild "
                     "(scripts/setup.sh does)", helper.string());
  }
  ScopedTempDir work("oclc");
  SpawnOptions options;
  options.argv = {helper.string(), "devices"};
  options.environment = HelperEnvironment(work.path());
  auto run = RunCommand(options, kListTimeout);
  if (!run.ok()) return run.error();
  if (!run->succeeded()) return MakeError(ErrorKind::kIo, "{} devices failed: {}", helper.string(), run->Describe());
  nlohmann::json devices = LastJsonLine(run->output);
  if (!devices.is_array()) return MakeError(ErrorKind::kIo, "{} devices printed no device list", helper.string());
  return devices;
}

Result<BuildOutput> OpenclCompiler::Build(const Task& task, const BuildRequest& request) const {
  BuildOutput output;
  auto plan = MakePlan(request.source, task);
  if (!plan.ok()) {
    output.log = request.display_name + ": " + plan.error().message;
    return output;
  }
  // Every launch's sizes evaluate at the task's first dev shape: a size naming nothing fails here,
  // with the build, not as a runtime error at the first case.
  const auto dev_shape = task.dev_shapes.empty() ? Result<DimValues>(DimValues{}) : task.WithDerivedDims(task.dev_shapes.front());
  if (!task.dev_shapes.empty() && dev_shape.ok()) {
    std::vector<int64_t> scalars;
    for (const auto& parameter : task.signature.parameters) {
      const auto dim = dev_shape->find(parameter.name);
      scalars.push_back(!parameter.is_pointer && dim != dev_shape->end() ? dim->second : 0);
    }
    for (const auto& launch : plan->launches) {
      if (auto sizes = ResolveLaunch(launch, *plan, scalars, 0); !sizes.ok()) {
        output.log = request.display_name + ": " + sizes.error().message;
        return output;
      }
    }
  }
  const nlohmann::json contract = Contract(task, *plan);
  Sha256Builder key;
  key.Add(kBuildVersion).Add(request.source).Add(contract.dump()).Add(device_).Add(device_facts_.dump());
  const std::string digest = key.HexDigest();
  output.shared_object = cache_directory_ / "objects" / (digest + ".clbin");
  const fs::path plan_path = OpenclPlanPath(output.shared_object);
  const fs::path log_path = cache_directory_ / "objects" / (digest + ".log");
  if (fs::exists(output.shared_object) && fs::exists(plan_path)) {
    output.compiled = true;
    output.cache_hit = true;
    if (auto log = ReadFile(log_path); log.ok()) output.log = *log;
    return output;
  }
  ScopedTempDir work("build", cache_directory_ / "tmp", OwnerMark::kMark);
  if (!work.ok()) {
    return MakeError(ErrorKind::kIo, "the build's temporary folder: {}; the cache directory {} must be writable (or set "
                     "KSMITH_CACHE_DIR to a folder you can write)", work.error(), cache_directory_.string());
  }
  const fs::path source_path = work.path() / fs::path(request.display_name).filename();
  const fs::path contract_path = work.path() / "contract.json";
  const fs::path binary_path = work.path() / "program.bin";
  fs::create_directories(work.path() / "pocl");
  if (auto status = WriteFileAtomic(source_path, request.source); !status.ok()) return status.error();
  if (auto status = WriteFileAtomic(contract_path, contract.dump()); !status.ok()) return status.error();
  SpawnOptions options;
  options.argv = {fs::absolute(DefaultOclcExecutable()).string(), "build", "--device", device_,
                  "--identity", device_facts_.value("identity", std::string()), "--source", source_path.string(),
                  "--contract", contract_path.string(), "--out", binary_path.string()};
  options.environment = HelperEnvironment(work.path() / "pocl");
  options.working_directory = work.path();
  for (const auto& arg : options.argv) output.command += (output.command.empty() ? "" : " ") + arg;
  // The runtime's compiler reads the candidate's text: it may read the system and run its own
  // tools (PoCL's ld), write its folder (and a GPU's device files), nothing else.
  std::vector<fs::path> writable = {work.path(), "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
  for (int device = 0; device < 16; ++device) writable.emplace_back(fmt::format("/dev/nvidia{}", device));
  auto ruleset = LandlockRuleset::Create({"/etc/OpenCL", "/etc/ld.so.cache", "/etc/alternatives", "/dev/null", "/dev/urandom",
                                          "/proc", "/sys", "/dev/nvidia-caps"},
                                         {"/usr", "/bin", "/lib", "/lib64", "/opt", fs::absolute(DefaultOclcExecutable())}, writable);
  if (ruleset.ok()) options.landlock_ruleset_fd = ruleset->fd();
  output.sandboxed = ruleset.ok();
  options.limits = limits_.ForChild(/*address_space=*/false);
  auto run = RunBuildCommand(options, limits_, kBuildTimeout, work.path(), "the OpenCL compiler");
  if (!run.ok()) return run.error();
  output.compile_s = run->exit.elapsed_s;
  output.limit_hit = run->limit_hit;
  const nlohmann::json reply = LastJsonLine(run->exit.output);
  const std::string log = reply.is_object() ? reply.value("log", std::string()) : std::string();
  const std::string problem = reply.is_object() ? reply.value("problem", std::string()) : std::string();
  if (run->exit.exit_code == 1 || (!run->exit.succeeded() && run->limit_hit)) {
    output.log = problem.empty() ? run->exit.output : request.display_name + ": " + problem + (log.empty() ? "" : "\n" + log);
    return output;
  }
  // The runtime's compiler died on this source (LLVM's assertions, a driver's compiler): the
  // source did not build, and the log says how it ended.
  if (run->exit.signal != 0) {
    output.log = fmt::format("{}: the OpenCL compiler crashed on this source ({})\n{}", request.display_name,
                             run->exit.Describe(), Tail(run->exit.output, 4000));
    return output;
  }
  if (!run->exit.succeeded()) {
    return MakeError(ErrorKind::kIo, "ksmith-oclc failed: {}", problem.empty() ? Tail(run->exit.output, 2000) : problem);
  }
  output.log = log;
  output.compiled = true;
  std::error_code error;
  fs::create_directories(output.shared_object.parent_path(), error);
  if (auto status = WriteFileAtomic(plan_path, plan->ToJson().dump()); !status.ok()) return status.error();
  fs::rename(binary_path, output.shared_object, error);
  if (error) return MakeError(ErrorKind::kIo, "cannot store {}: {}", output.shared_object.string(), error.message());
  (void)WriteFileAtomic(log_path, output.log);
  return output;
}

}  // namespace ksmith
