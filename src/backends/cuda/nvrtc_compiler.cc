#include "backends/cuda/nvrtc_compiler.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>

#include <fmt/format.h>

#include "backends/cuda/cuda_resources.h"
#include "backends/cuda/nvrtc_form.h"
#include "compile/build_command.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/work_folders.h"

namespace ksmith {

namespace fs = std::filesystem;

namespace {

// Each step gets nvcc's own limit: a CUTLASS-sized kernel takes minutes in ptxas.
constexpr auto kCompileTimeout = std::chrono::seconds(300);
constexpr auto kToolTimeout = std::chrono::seconds(30);

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

Error WorkFolderError(const ScopedTempDir& work) {
  return MakeError(ErrorKind::kIo, "the build's temporary folder: {}; the cache directory must be writable (or set "
                   "KSMITH_CACHE_DIR to a folder you can write)", work.error());
}

}  // namespace

fs::path DefaultNvrtcExecutable() { return HelperExecutable("KSMITH_NVRTC", "ksmith-nvrtc"); }

NvrtcCompiler::NvrtcCompiler(NvrtcInfo info, fs::path cache_directory, BuildLimits limits)
    : info_(std::move(info)), cache_directory_(std::move(cache_directory)), limits_(limits) {}

Result<NvrtcCompiler> NvrtcCompiler::Create(fs::path cache_directory, const NvccInfo& nvcc, BuildLimits limits) {
  NvrtcInfo info;
  // Absolute: the build runs it from its work folder.
  info.executable = fs::absolute(DefaultNvrtcExecutable());
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
  info.paths = nvcc.paths;
  info.toolkit_version = nvcc.version_output;
  info.cuobjdump = nvcc.cuobjdump;
  info.target = nvcc.target;
  // nvcc's device flags (-O3 is NVRTC's default), with the target's real machine code only.
  info.device_options = {"-arch=" + nvcc.target.arch, "-std=c++17", "-lineinfo", "-Xptxas", "-v",
                         "-DKSMITH_DEVICE=1"};
  info.host_flags = {"-std=c++17", "-O3", "-fPIC", "-fvisibility=hidden", "-DKSMITH_HOST=1"};
  return NvrtcCompiler(std::move(info), std::move(cache_directory), limits);
}

Result<BuildOutput> NvrtcCompiler::Build(const Task& task, const BuildRequest& request) const {
  // The worker loads device code for the candidate alone: a trusted library keeps its own (nvcc).
  if (request.role != KernelRole::kCandidate) {
    return MakeError(ErrorKind::kInvalidArgument, "a task's CUDA reference and baseline are built with nvcc, not in the "
                     "NVRTC form: {} includes <{}>", request.display_name, kNvrtcFormHeader);
  }
  BuildOutput failed;
  auto kernels = LaunchedKernels(request.source);
  if (!kernels.ok()) {
    failed.log = fmt::format("{}: error: {}\n", request.display_name, kernels.error().message);
    return failed;
  }
  if (kernels->empty()) {
    failed.log = fmt::format("{}: error: the NVRTC form launches its kernels with KSMITH_LAUNCH(grid, block, "
                             "shared_bytes, stream, kernel)(arguments...) in KSMITH_HOST; this source has none\n",
                             request.display_name);
    return failed;
  }

  Sha256Builder key;
  key.Add(NvrtcHostWrapper(task, "@KERNEL@")).Add(NvrtcLauncherSource());
  for (const auto* headers : {&NvrtcHostHeaders(), &NvrtcDeviceHeaders()}) {
    for (const auto& [name, text] : *headers) key.Add(name).Add(text);
  }
  key.Add(request.source).Add(request.display_name);
  key.Add(info_.executable.string()).Add(info_.version).Add(info_.toolkit_version).Add(info_.host_version);
  key.Add(info_.target.arch).Add(info_.toolkit_root.string());
  for (const auto& [list, folders] : {std::pair{"include", &info_.paths.include_dirs},
                                      std::pair{"system_include", &info_.paths.system_include_dirs},
                                      std::pair{"library", &info_.paths.library_dirs}}) {
    key.Add(list);  // a folder moved from one list to another is another build
    for (const auto& folder : *folders) key.Add(folder.string());
  }
  for (const auto& option : info_.device_options) key.Add(option);
  for (const auto& flag : info_.host_flags) key.Add(flag);
  for (const auto& library : request.libraries) key.Add("-l" + library);
  const fs::path stored = cache_directory_ / "cuda-objects" / (key.HexDigest() + ".so");
  auto beside = [&stored](std::string_view extension) { return fs::path(stored).replace_extension(extension); };

  // The .so is stored last: its presence means everything beside it is complete (unless someone
  // removed files from the cache since: then it is built again).
  if (fs::exists(stored) && fs::exists(beside(kNvrtcCubinExtension)) && fs::exists(beside(kNvrtcKernelsExtension))) {
    BuildOutput output = CachedCudaBuild(stored, beside(kNvrtcCubinExtension), info_.cuobjdump);
    output.device_code = beside(kNvrtcCubinExtension);
    return output;
  }
  auto launcher = LauncherObject();
  if (!launcher.ok()) return launcher.error();
  // Marked with this process: a build killed mid-way leaves the folder, which a later run removes.
  ScopedTempDir work("nvrtc", cache_directory_ / "tmp", OwnerMark::kMark);
  if (!work.ok()) return WorkFolderError(work);
  auto output = Run(task, request, *kernels, *launcher, work.path(), /*walled=*/true);
  // A build that fails walled in may fail for the walls on this machine (a toolkit they do not
  // cover): then it builds in the open, and says so (sandboxed == false), as nvcc's builds do.
  std::optional<ScopedTempDir> open_work;
  fs::path built_in = work.path();
  if (output.ok() && !output->compiled && output->sandboxed && !WallsWork(*launcher)) {
    open_work.emplace("nvrtc", cache_directory_ / "tmp", OwnerMark::kMark);
    if (!open_work->ok()) return WorkFolderError(*open_work);
    built_in = open_work->path();
    output = Run(task, request, *kernels, *launcher, built_in, /*walled=*/false);
  }
  if (!output.ok() || !output->compiled) return output;
  StoreCudaBuildRecord(stored, *output);
  std::error_code error;
  fs::rename(built_in / "kernel.cubin", beside(kNvrtcCubinExtension), error);
  if (!error) fs::rename(built_in / "kernels.tsv", beside(kNvrtcKernelsExtension), error);
  if (!error) fs::rename(output->shared_object, stored, error);
  if (error) return MakeError(ErrorKind::kIo, "cannot store {}: {}", stored.string(), error.message());
  output->shared_object = stored;
  output->device_code = beside(kNvrtcCubinExtension);
  output->pending_sass = ReadSassInBackground(info_.cuobjdump, output->device_code, beside(".sass"));
  return output;
}

Result<fs::path> NvrtcCompiler::LauncherObject() const {
  Sha256Builder key;
  key.Add(NvrtcLauncherSource()).Add(info_.host_version);
  for (const auto& flag : info_.host_flags) key.Add(flag);
  const fs::path stored = cache_directory_ / "cuda-objects" / ("launcher-" + key.HexDigest() + ".o");
  // Builds beside this one may be linking it: once stored, the file is never replaced (a build's
  // Landlock rule names the file it found, and a new file at that path would be denied to it).
  static std::mutex storing;
  std::lock_guard lock(storing);
  if (fs::exists(stored)) return stored;
  ScopedTempDir work("launcher", cache_directory_ / "tmp", OwnerMark::kMark);
  if (!work.ok()) return WorkFolderError(work);
  if (auto status = WriteFileAtomic(work.path() / "launcher.cc", NvrtcLauncherSource()); !status.ok()) {
    return status.error();
  }
  SpawnOptions options;
  options.argv = {info_.host_compiler.string()};
  options.argv.insert(options.argv.end(), info_.host_flags.begin(), info_.host_flags.end());
  options.argv.insert(options.argv.end(), {"-c", "launcher.cc", "-o", "launcher.o"});
  options.environment = CudaToolEnvironment();
  options.working_directory = work.path();
  options.limits = limits_.ForChild(/*address_space=*/true);
  auto run = RunBuildCommand(options, limits_, kCompileTimeout, work.path(), "the host compiler");
  if (!run.ok()) return run.error();
  if (!run->exit.succeeded()) {
    // ksmith's own source: a failure here is this machine's compiler, never a candidate's.
    return MakeError(ErrorKind::kInternal, "ksmith's launcher object does not compile with {}: {}",
                     info_.host_compiler.string(), Tail(run->exit.output, 2000));
  }
  // link(2), not rename: another process that stored it first keeps its file.
  if (::link((work.path() / "launcher.o").c_str(), stored.c_str()) != 0 && errno != EEXIST) {
    return MakeError(ErrorKind::kIo, "cannot store {}: {}", stored.string(), std::strerror(errno));
  }
  return stored;
}

Status NvrtcCompiler::WriteSources(const fs::path& work, const fs::path& kernel_path, const std::string& kernel,
                                   const std::string& host) const {
  std::error_code error;
  fs::create_directories(kernel_path.parent_path(), error);
  if (auto status = WriteFileAtomic(kernel_path, kernel); !status.ok()) return status;
  if (auto status = WriteHeaders(work / "host_include", NvrtcHostHeaders()); !status.ok()) return status;
  if (auto status = WriteHeaders(work / "device_include", NvrtcDeviceHeaders()); !status.ok()) return status;
  return WriteFileAtomic(work / "host.cc", host);
}

NvrtcCompiler::Commands NvrtcCompiler::CommandsFor(const fs::path& kernel_path, const fs::path& work,
                                                   const std::vector<std::string>& kernels, const fs::path& launcher,
                                                   const std::vector<std::string>& libraries) const {
  Commands commands;
  auto& device = commands.device;
  auto& host = commands.host;
  device = {info_.executable.string(), "--source", kernel_path.string(), "--cubin", (work / "kernel.cubin").string(),
            "--kernels", (work / "kernels.tsv").string()};
  for (const auto& option : info_.device_options) device.insert(device.end(), {"--option", option});
  // ksmith's stand-ins first, then nvcc's own folders in nvcc's order (CCCL's <cuda/std/...> last).
  device.insert(device.end(), {"--option", "-I" + (work / "device_include").string()});
  host = {info_.host_compiler.string()};
  host.insert(host.end(), info_.host_flags.begin(), info_.host_flags.end());
  host.insert(host.end(), {"-I", (work / "host_include").string()});
  for (const auto* folders : {&info_.paths.include_dirs, &info_.paths.system_include_dirs}) {
    for (const auto& folder : *folders) {
      device.insert(device.end(), {"--option", "-I" + folder.string()});
      host.insert(host.end(), {folders == &info_.paths.include_dirs ? "-I" : "-isystem", folder.string()});
    }
  }
  for (const auto& kernel : kernels) device.insert(device.end(), {"--name", kernel});
  host.insert(host.end(), {"-c", "host.cc", "-o", "host.o"});
  auto& link = commands.link;
  link = {info_.host_compiler.string(), "-shared", "-o", "kernel.so", "host.o"};
  if (!launcher.empty()) link.push_back(launcher.string());
  for (const auto& folder : info_.paths.library_dirs) link.push_back("-L" + folder.string());
  link.insert(link.end(), {"-lcudart", "-Wl,--no-undefined,-z,now"});
  for (const auto& library : libraries) link.push_back("-l" + library);
  return commands;
}

std::optional<LandlockRuleset> NvrtcCompiler::Walls(const fs::path& work, const fs::path& launcher) const {
  // ksmith-nvrtc itself (the file, not its folder, which may hold other candidates' builds) and
  // the launcher object, beside the toolkit and the system's tools.
  std::vector<fs::path> runnable = {info_.executable, launcher};
  if (info_.host_compiler.is_absolute()) runnable.push_back(info_.host_compiler.parent_path());
  return CudaBuildRuleset(info_.toolkit_root, info_.paths, work, runnable);
}

NvrtcCompiler::Step NvrtcCompiler::MakeStep(std::vector<std::string> argv, std::string name, const fs::path& work,
                             const std::optional<LandlockRuleset>& walls) const {
  Step made;
  made.options.argv = std::move(argv);
  made.options.environment = CudaToolEnvironment();
  made.options.environment.push_back("TMPDIR=" + work.string());
  made.options.working_directory = work;
  made.options.limits = limits_.ForChild(/*address_space=*/true);
  if (walls) made.options.landlock_ruleset_fd = walls->fd();
  made.name = std::move(name);
  return made;
}

bool NvrtcCompiler::WallsWork(const fs::path& launcher) const {
  std::lock_guard lock(walls_->mutex);
  if (walls_->work) return *walls_->work;
  // ksmith's own sources, with the headers and the library every build reads: compiled and
  // linked walled in, then in the open.
  static constexpr const char* kProbeKernel =
      "#include <cstdint>\n#include <cuda_fp16.h>\n#include <ksmith/launch.h>\n"
      "__global__ void ksmith_probe(int64_t* out) { *out = 1; }\n";
  static constexpr const char* kProbeHost =
      "#include <cstdint>\n#include <ksmith/launch.h>\nextern \"C\" int ksmith_probe() { return 0; }\n";
  for (const bool walled : {true, false}) {
    ScopedTempDir work("nvrtc-probe", cache_directory_ / "tmp", OwnerMark::kMark);
    if (!work.ok()) return true;
    const fs::path kernel_path = work.path() / "src" / "probe.cu";
    if (!WriteSources(work.path(), kernel_path, kProbeKernel, kProbeHost).ok()) return true;
    std::optional<LandlockRuleset> walls = walled ? Walls(work.path(), launcher) : std::nullopt;
    if (walled && !walls) return true;
    const Commands commands = CommandsFor(kernel_path, work.path(), {"ksmith_probe"}, {}, {});
    bool built = true;
    for (const auto& [argv, name] : {std::pair{commands.device, "NVRTC"}, std::pair{commands.host, "g++"},
                                     std::pair{commands.link, "the linker"}}) {
      if (!built) break;
      auto run = RunBuildCommand(MakeStep(argv, name, work.path(), walls).options, limits_, kCompileTimeout,
                                 work.path(), name);
      // A probe stopped by a limit (a loaded machine) says nothing of the walls: not remembered.
      if (!run.ok() || run->limit_hit) return true;
      built = run->exit.succeeded();
    }
    if (built) {
      walls_->work = walled;
      return walled;
    }
  }
  walls_->work = true;  // the compilers fail in the open too: the walls are not the cause
  return true;
}

Result<BuildOutput> NvrtcCompiler::Run(const Task& task, const BuildRequest& request,
                                       const std::vector<std::string>& kernels, const fs::path& launcher,
                                       const fs::path& work, bool walled) const {
  const fs::path kernel_path = work / "src" / fs::path(request.display_name).filename();
  if (auto status = WriteSources(work, kernel_path, request.source, NvrtcHostWrapper(task, kernel_path.string()));
      !status.ok()) {
    return status.error();
  }
  // The compilers read the candidate's text: walled in like nvcc.
  std::optional<LandlockRuleset> ruleset = walled ? Walls(work, launcher) : std::nullopt;
  auto step = [&](std::vector<std::string> argv, std::string name) {
    return MakeStep(std::move(argv), std::move(name), work, ruleset);
  };
  const Commands commands = CommandsFor(kernel_path, work, kernels, launcher, request.libraries);
  const std::vector<std::string>& device = commands.device;
  const std::vector<std::string>& host = commands.host;
  const std::vector<std::string>& link = commands.link;

  BuildOutput output;
  output.sandboxed = ruleset.has_value();
  output.command = fmt::format("{} && {} && {}", CommandText(device), CommandText(host), CommandText(link));
  const auto started = std::chrono::steady_clock::now();
  auto run = [this, &work](const Step& what) {
    return RunBuildCommand(what.options, limits_, kCompileTimeout, work, what.name);
  };
  // The device compiler beside the host compiler and the link: the build costs the slower side.
  const Step device_step = step(device, "NVRTC"), host_step = step(host, "the host compiler"),
             link_step = step(link, "the linker");
  auto device_run = std::async(std::launch::async, run, std::cref(device_step));
  auto host_run = run(host_step);
  std::optional<Result<BuildRun>> link_run;
  if (host_run.ok() && host_run->exit.succeeded()) link_run = run(link_step);
  auto device_result = device_run.get();
  if (!device_result.ok()) return device_result.error();
  if (!host_run.ok()) return host_run.error();
  if (link_run && !link_run->ok()) return link_run->error();
  output.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // ksmith-nvrtc's exit status 2 is its own trouble (a file it could not write), not the source's.
  if (device_result->exit.exit_code == 2 && device_result->exit.signal == 0 && !device_result->limit_hit) {
    return MakeError(ErrorKind::kInternal, "ksmith-nvrtc failed: {}", Tail(device_result->exit.output, 2000));
  }
  output.log = device_result->exit.output + host_run->exit.output + (link_run ? (*link_run)->exit.output : "");
  output.resources = ParsePtxasInfo(device_result->exit.output);
  for (const std::optional<BuildLimitHit>* hit :
       {&device_result->limit_hit, &host_run->limit_hit, link_run ? &(*link_run)->limit_hit : nullptr}) {
    if (hit != nullptr && !output.limit_hit) output.limit_hit = *hit;
  }
  if (!device_result->exit.succeeded() || !link_run || !(*link_run)->exit.succeeded()) return output;
  if (!fs::exists(work / "kernel.so") || !fs::exists(work / "kernel.cubin")) return output;
  output.compiled = true;
  output.shared_object = work / "kernel.so";
  return output;
}

}  // namespace ksmith
