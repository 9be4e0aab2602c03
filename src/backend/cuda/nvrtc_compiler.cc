#include "backend/cuda/nvrtc_compiler.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>

#include <fmt/format.h>

#include "backend/build_command.h"
#include "backend/cuda/nvrtc_form.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/work_folders.h"

namespace ksmith {

namespace fs = std::filesystem;

namespace {

// Each of the three steps gets nvcc's own limit: a CUTLASS-sized kernel takes minutes in ptxas.
constexpr auto kCompileTimeout = std::chrono::seconds(300);
constexpr auto kToolTimeout = std::chrono::seconds(30);
constexpr size_t kMaxSassBytes = size_t{64} << 20;

std::string CommandText(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) text += (text.empty() ? "" : " ") + arg;
  return text;
}

Status WriteHeaders(const fs::path& folder, const std::map<std::string, std::string>& headers) {
  for (const auto& [name, text] : headers) {
    std::error_code error;
    fs::create_directories((folder / name).parent_path(), error);
    if (auto status = WriteFileAtomic(folder / name, text); !status.ok()) return status;
  }
  return {};
}

// One step of a build, walled in and limited; its output joins the build's log.
struct Step {
  SpawnOptions options;
  std::string name;  // "NVRTC", "the host compiler", "the linker": a limit's reason names it
};

}  // namespace

fs::path DefaultNvrtcExecutable() {
  if (const char* configured = std::getenv("KSMITH_NVRTC"); configured && *configured) return configured;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return self.parent_path() / "ksmith-nvrtc";
}

NvrtcCompiler::NvrtcCompiler(NvrtcInfo info, fs::path cache_directory, BuildLimits limits)
    : info_(std::move(info)), cache_directory_(std::move(cache_directory)), limits_(limits) {}

Result<NvrtcCompiler> NvrtcCompiler::Create(fs::path cache_directory, const NvccInfo& nvcc, BuildLimits limits) {
  NvrtcInfo info;
  info.executable = DefaultNvrtcExecutable();
  SpawnOptions options;
  options.argv = {info.executable.string(), "--version"};
  options.environment = CudaToolEnvironment();
  auto run = RunCommand(options, kToolTimeout);
  if (!run.ok() || !run->succeeded()) {
    return MakeError(ErrorKind::kNotFound,
                     "{} does not run ({}): build ksmith with the CUDA toolkit, or set KSMITH_NVRTC to a working "
                     "ksmith-nvrtc",
                     info.executable.string(), run.ok() ? run->Describe() : run.error().message);
  }
  info.version = FirstLine(run->output, 200);
  const char* configured = std::getenv("KSMITH_CXX");
  info.host_compiler = configured && *configured ? configured : "g++";
  options.argv = {info.host_compiler.string(), "--version"};
  run = RunCommand(options, kToolTimeout);
  if (!run.ok() || !run->succeeded()) {
    return MakeError(ErrorKind::kNotFound, "the host compiler '{}' does not run: install g++ or set KSMITH_CXX",
                     info.host_compiler.string());
  }
  info.host_version = FirstLine(run->output, 200);
  info.toolkit_root = nvcc.toolkit_root;
  info.cuobjdump = nvcc.cuobjdump;
  info.target = nvcc.target;
  // nvcc's device flags (-O3 is NVRTC's default), with the target's real machine code only.
  info.device_options = {"-arch=" + nvcc.target.arch, "-std=c++17", "-lineinfo", "-Xptxas", "-v",
                         "-DKSMITH_DEVICE=1"};
  info.host_flags = {"-std=c++17", "-O3", "-fPIC", "-fvisibility=hidden", "-DKSMITH_HOST=1"};
  return NvrtcCompiler(std::move(info), std::move(cache_directory), limits);
}

Result<BuildOutput> NvrtcCompiler::Build(const Task& task, const BuildRequest& request) const {
  if (request.role == KernelRole::kReference) {
    return MakeError(ErrorKind::kInvalidArgument, "a task's CUDA reference is built with nvcc, not in the NVRTC form");
  }
  BuildOutput failed;
  auto kernels = LaunchedKernels(request.source);
  if (!kernels.ok()) {
    failed.log = fmt::format("{}:{}\n", request.display_name, kernels.error().message);
    return failed;
  }
  if (kernels->empty()) {
    failed.log = fmt::format("{}: error: the NVRTC form launches its kernels with KSMITH_LAUNCH(grid, block, "
                             "shared_bytes, stream, kernel)(arguments...) in KSMITH_HOST; this source has none\n",
                             request.display_name);
    return failed;
  }

  Sha256Builder key;
  key.Add(NvrtcHostWrapper(task, "@KERNEL@")).Add(NvrtcDataAssembly("@CUBIN@", {}));
  for (const auto* headers : {&NvrtcHostHeaders(), &NvrtcDeviceHeaders()}) {
    for (const auto& [name, text] : *headers) key.Add(name).Add(text);
  }
  key.Add(request.source).Add(request.display_name).Add(info_.version).Add(info_.host_version);
  key.Add(info_.target.arch).Add(info_.toolkit_root.string());
  for (const auto& option : info_.device_options) key.Add(option);
  for (const auto& flag : info_.host_flags) key.Add(flag);
  for (const auto& library : request.libraries) key.Add("-l" + library);
  const std::string digest = key.HexDigest();
  const fs::path folder = cache_directory_ / "cuda-objects";
  const fs::path stored = folder / (digest + ".so");
  const fs::path cubin = folder / (digest + ".cubin");
  const fs::path log_path = folder / (digest + ".log");
  const fs::path sass_path = folder / (digest + ".sass");
  const fs::path build_path = folder / (digest + ".json");

  if (fs::exists(stored)) {
    BuildOutput output;
    output.compiled = true;
    output.cache_hit = true;
    output.shared_object = stored;
    if (auto log = ReadFile(log_path); log.ok()) output.log = *log;
    if (auto build = ReadFile(build_path); build.ok()) {
      const auto json = nlohmann::json::parse(*build, nullptr, /*allow_exceptions=*/false);
      if (json.is_object()) {
        output.command = json.value("command", "");
        output.sandboxed = json.value("sandboxed", false);
      }
    }
    output.resources = ParsePtxasInfo(output.log);
    if (auto sass = ReadFile(sass_path, kMaxSassBytes); sass.ok()) {
      output.sass = SummarizeSass(*sass);
    } else {
      output.pending_sass = ReadSassInBackground(info_.cuobjdump, cubin, sass_path);
    }
    return output;
  }

  auto output = Run(task, request, *kernels, /*sandboxed=*/true);
  if (!output.ok() || !output->compiled) return output;
  const fs::path work = output->shared_object.parent_path();
  (void)WriteFileAtomic(log_path, output->log);
  (void)WriteFileAtomic(build_path,
                        nlohmann::json({{"command", output->command}, {"sandboxed", output->sandboxed}}).dump());
  std::error_code error;
  fs::rename(work / "kernel.cubin", cubin, error);
  if (!error) fs::rename(output->shared_object, stored, error);
  RemoveWorkFolder(work);
  if (error) return MakeError(ErrorKind::kIo, "cannot store {}: {}", stored.string(), error.message());
  output->shared_object = stored;
  output->pending_sass = ReadSassInBackground(info_.cuobjdump, cubin, sass_path);
  return output;
}

Result<BuildOutput> NvrtcCompiler::Run(const Task& task, const BuildRequest& request,
                                       const std::vector<std::string>& kernels, bool sandboxed) const {
  const fs::path parent = cache_directory_ / "tmp";
  std::error_code error;
  fs::create_directories(parent, error);
  std::string pattern = (parent / "nvrtc-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return MakeError(ErrorKind::kIo, "the build's temporary folder: cannot create a folder under {}: {}; the cache "
                     "directory must be writable (or set KSMITH_CACHE_DIR to a folder you can write)",
                     parent.string(), error ? error.message() : std::strerror(errno));
  }
  const fs::path work = pattern;
  MarkWorkFolder(work);
  struct Cleanup {
    fs::path path;
    bool keep = false;
    ~Cleanup() {
      if (!keep) RemoveWorkFolder(path);
    }
  } cleanup{work};

  const fs::path kernel_path = work / "src" / fs::path(request.display_name).filename();
  fs::create_directories(kernel_path.parent_path(), error);
  if (auto status = WriteFileAtomic(kernel_path, request.source); !status.ok()) return status.error();
  if (auto status = WriteHeaders(work / "host_include", NvrtcHostHeaders()); !status.ok()) return status.error();
  if (auto status = WriteHeaders(work / "device_include", NvrtcDeviceHeaders()); !status.ok()) return status.error();
  if (auto status = WriteFileAtomic(work / "host.cc", NvrtcHostWrapper(task, kernel_path.string())); !status.ok()) {
    return status.error();
  }

  std::optional<LandlockRuleset> ruleset =
      sandboxed ? CudaBuildRuleset(info_.toolkit_root, work, {info_.executable.parent_path()}) : std::nullopt;
  auto step = [&](std::vector<std::string> argv, std::string name) {
    Step made;
    made.options.argv = std::move(argv);
    made.options.environment = CudaToolEnvironment();
    made.options.environment.push_back("TMPDIR=" + work.string());
    made.options.working_directory = work;
    made.options.limits = limits_.ForChild(/*address_space=*/true);
    if (ruleset) made.options.landlock_ruleset_fd = ruleset->fd();
    made.name = std::move(name);
    return made;
  };
  const std::string include = (info_.toolkit_root / "include").string();

  std::vector<std::string> device = {info_.executable.string(), "--source", kernel_path.string(), "--cubin",
                                     (work / "kernel.cubin").string(), "--kernels", (work / "kernels.tsv").string()};
  for (const auto& option : info_.device_options) device.insert(device.end(), {"--option", option});
  for (const auto& folder : {(work / "device_include").string(), include, include + "/cccl"}) {
    device.insert(device.end(), {"--option", "-I" + folder});
  }
  for (const auto& kernel : kernels) device.insert(device.end(), {"--name", kernel});
  std::vector<std::string> host = {info_.host_compiler.string()};
  host.insert(host.end(), info_.host_flags.begin(), info_.host_flags.end());
  host.insert(host.end(), {"-I", (work / "host_include").string(), "-I", include, "-c", "host.cc", "-o", "host.o"});
  std::vector<std::string> link = {info_.host_compiler.string(), "-shared", "-o", "kernel.so", "host.o", "data.S",
                                   "-L" + (info_.toolkit_root / "lib64").string(), "-lcudart",
                                   "-Wl,--no-undefined,-z,now"};
  for (const auto& library : request.libraries) link.push_back("-l" + library);

  BuildOutput output;
  output.sandboxed = ruleset.has_value();
  output.command = fmt::format("{} && {} && {}", CommandText(device), CommandText(host), CommandText(link));
  const auto started = std::chrono::steady_clock::now();
  auto run = [this, &work](const Step& step) {
    return RunBuildCommand(step.options, limits_, kCompileTimeout, work, step.name);
  };
  // The device and host compilers at once: the build costs the slower of the two, then the link.
  const Step device_step = step(device, "NVRTC"), host_step = step(host, "the host compiler");
  auto device_run = std::async(std::launch::async, run, std::cref(device_step));
  auto host_run = run(host_step);
  auto device_result = device_run.get();
  if (!device_result.ok()) return device_result.error();
  if (!host_run.ok()) return host_run.error();
  output.log = device_result->exit.output + host_run->exit.output;
  output.resources = ParsePtxasInfo(device_result->exit.output);
  for (const auto* finished : {&*device_result, &*host_run}) {
    if (!output.limit_hit) output.limit_hit = finished->limit_hit;
  }
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  if (!device_result->exit.succeeded() || !host_run->exit.succeeded()) {
    output.compile_s = elapsed();
    return output;
  }

  std::vector<std::pair<std::string, std::string>> table;
  auto names = ReadFile(work / "kernels.tsv");
  if (!names.ok()) return names.error();
  for (const auto& line : SplitLines(*names)) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) table.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  if (auto status = WriteFileAtomic(work / "data.S", NvrtcDataAssembly("kernel.cubin", table)); !status.ok()) {
    return status.error();
  }
  auto linked = run(step(link, "the linker"));
  if (!linked.ok()) return linked.error();
  output.log += linked->exit.output;
  output.compile_s = elapsed();
  if (!output.limit_hit) output.limit_hit = linked->limit_hit;
  if (!linked->exit.succeeded() || !fs::exists(work / "kernel.so")) return output;
  output.compiled = true;
  output.shared_object = work / "kernel.so";
  cleanup.keep = true;
  return output;
}

}  // namespace ksmith
