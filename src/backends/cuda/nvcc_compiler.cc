#include "backends/cuda/nvcc_compiler.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <regex>

#include <fmt/format.h>

#include "backends/cuda/cuda_resources.h"
#include "compile/build_command.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/landlock.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "core/work_folders.h"

namespace ksmith {

namespace fs = std::filesystem;

namespace {

// A CUTLASS-sized kernel takes minutes in ptxas; one that takes longer is stuck.
constexpr auto kCompileTimeout = std::chrono::seconds(300);
constexpr auto kToolTimeout = std::chrono::seconds(30);
constexpr auto kNvidiaSmiTimeout = std::chrono::seconds(10);
// Bump when the wrapper's text, the flags' meaning or the cache layout changes.
constexpr const char* kWrapperVersion = "ksmith-cuda-wrapper-2";
constexpr const char* kDefaultArch = "sm_90a";
constexpr const char* kDefaultNvcc = "/usr/local/cuda/bin/nvcc";
constexpr size_t kMaxSassBytes = size_t{64} << 20;

bool IsExecutableFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<fs::path> FindOnPath(const char* search_path, std::string_view name) {
  if (search_path == nullptr) return std::nullopt;
  std::string_view rest = search_path;
  while (true) {
    const size_t colon = rest.find(':');
    const std::string_view directory = rest.substr(0, colon);
    if (!directory.empty() && IsExecutableFile(fs::path(directory) / name)) {
      return fs::path(directory) / name;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

// Known to compile on every toolkit ksmith supports; used to tell whether Landlock stops nvcc.
constexpr const char* kSandboxProbe = R"(
__global__ void ksmith_probe(float* x) { x[threadIdx.x] += 1.0f; }
void ksmith_probe_launch(float* x) { ksmith_probe<<<1, 32>>>(x); }
)";

// The SASS summary of `shared_object`; `text` gets cuobjdump's output.
SassSummary ReadSass(const fs::path& cuobjdump, const fs::path& shared_object, std::string* text) {
  SassSummary summary;
  if (cuobjdump.empty()) {
    summary.error = "cuobjdump is not installed beside nvcc or on PATH";
    return summary;
  }
  SpawnOptions options;
  options.argv = {cuobjdump.string(), "-sass", shared_object.string()};
  options.environment = CudaToolEnvironment();
  auto run = RunCommand(options, kToolTimeout, kMaxSassBytes);
  if (!run.ok()) {
    summary.error = "cuobjdump did not start: " + run.error().message;
    return summary;
  }
  if (!run->succeeded()) {
    summary.error = fmt::format("cuobjdump failed ({}): {}", run->Describe(), Tail(run->output, 500));
    return summary;
  }
  *text = run->output;
  return SummarizeSass(*text);
}

}  // namespace

std::vector<std::string> CudaToolEnvironment() {
  // nvcc needs PATH to find the host compiler; nothing else from the user's environment.
  const char* path = std::getenv("PATH");
  return {std::string("PATH=") + (path ? path : "/usr/bin:/bin"), "LC_ALL=C"};
}

std::optional<LandlockRuleset> CudaBuildRuleset(const fs::path& toolkit_root, const ToolkitPaths& paths,
                                                const fs::path& work, const std::vector<fs::path>& executable) {
  std::vector<fs::path> runnable = {"/usr", "/bin", "/lib", "/lib64", "/opt", toolkit_root};
  // nvcc's own root where a wrapper script stands in for it elsewhere: its bin/ and nvvm/ run.
  if (!paths.root.empty() && paths.root != toolkit_root) runnable.push_back(paths.root);
  runnable.insert(runnable.end(), executable.begin(), executable.end());
  runnable.insert(runnable.end(), paths.library_dirs.begin(), paths.library_dirs.end());
  std::vector<fs::path> readable = {"/usr/include", "/usr/local/include", "/etc/ld.so.cache", "/etc/alternatives",
                                    "/dev/null", "/dev/urandom", "/proc/cpuinfo", "/sys/devices/system/cpu"};
  readable.insert(readable.end(), paths.include_dirs.begin(), paths.include_dirs.end());
  readable.insert(readable.end(), paths.system_include_dirs.begin(), paths.system_include_dirs.end());
  auto created = LandlockRuleset::Create(readable, runnable, {work});
  if (!created.ok()) return std::nullopt;
  return std::move(created.value());
}

BuildOutput CachedCudaBuild(const fs::path& stored, const fs::path& sass_object, const fs::path& cuobjdump) {
  auto beside = [&stored](const char* extension) { return fs::path(stored).replace_extension(extension); };
  BuildOutput output;
  output.compiled = true;
  output.cache_hit = true;
  output.shared_object = stored;
  if (auto log = ReadFile(beside(".log")); log.ok()) output.log = *log;
  // How the stored object was built: the command and whether the compilers ran walled in.
  if (auto build = ReadFile(beside(".json")); build.ok()) {
    const auto json = nlohmann::json::parse(*build, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) {
      output.command = json.value("command", "");
      output.sandboxed = json.value("sandboxed", false);
    }
  }
  output.resources = ParsePtxasInfo(output.log);
  if (auto sass = ReadFile(beside(".sass"), kMaxSassBytes); sass.ok()) {
    output.sass = SummarizeSass(*sass);
  } else {
    output.pending_sass = ReadSassInBackground(cuobjdump, sass_object, beside(".sass"));  // a build beside is still reading it
  }
  return output;
}

void StoreCudaBuildRecord(const fs::path& stored, const BuildOutput& output) {
  (void)WriteFileAtomic(fs::path(stored).replace_extension(".log"), output.log);
  (void)WriteFileAtomic(fs::path(stored).replace_extension(".json"),
                        nlohmann::json({{"command", output.command}, {"sandboxed", output.sandboxed}}).dump());
}

std::shared_future<SassSummary> ReadSassInBackground(const fs::path& cuobjdump, const fs::path& object,
                                                     const fs::path& sass_path) {
  // Copies of the paths: the thread may outlive the compiler that asked.
  return std::async(std::launch::async, [cuobjdump, object, sass_path] {
           std::string text;
           SassSummary summary = ReadSass(cuobjdump, object, &text);
           if (!text.empty()) (void)WriteFileAtomic(sass_path, text);
           return summary;
         })
      .share();
}

// ------------------------------------------------------------------------------------- targets

std::string CudaTarget::Gencode() const {
  const std::string number = arch.substr(arch.find('_') + 1);
  return fmt::format("-gencode=arch=compute_{},code=sm_{}", number, number);
}

nlohmann::json CudaTarget::ToJson() const { return {{"arch", arch}, {"origin", origin}}; }

Result<std::string> NormalizeCudaArch(std::string_view flag) {
  static const std::regex accepted(R"(^(?:sm_)?([1-9][0-9]{1,2}[af]?)$)");
  const std::string text(Trim(flag));
  std::smatch match;
  if (std::regex_match(text, match, accepted)) return "sm_" + match[1].str();
  if (text.starts_with("compute_")) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--arch {}: compute_XX names a virtual (PTX) architecture; give the real one, "
                     "e.g. sm_{} or {}",
                     text, text.substr(8), text.substr(8));
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   "--arch '{}' is not a GPU architecture: use a form like sm_90a, sm_80 or 90a", text);
}

Result<std::string> ArchForComputeCapability(std::string_view capability) {
  static const std::regex version(R"(^([1-9][0-9]?)\.([0-9])$)");
  const std::string text(Trim(capability));
  std::smatch match;
  if (!std::regex_match(text, match, version)) {
    return MakeError(ErrorKind::kParse, "'{}' is not a compute capability like 9.0", text);
  }
  const std::string major = match[1], minor = match[2];
  // The arch-specific variants unlock wgmma (Hopper) and tcgen05 (Blackwell); the binary then
  // runs on that exact GPU family only, which is all a local evaluation needs.
  const bool specific = minor == "0" && (major == "9" || major == "10" || major == "12");
  return "sm_" + major + minor + (specific ? "a" : "");
}

std::optional<CudaTarget> ParseNvidiaSmiQuery(std::string_view output) {
  for (const auto& line : SplitLines(output)) {
    const size_t comma = line.find(',');
    if (comma == std::string::npos) continue;
    auto arch = ArchForComputeCapability(std::string_view(line).substr(0, comma));
    if (!arch.ok()) continue;
    const std::string name(Trim(std::string_view(line).substr(comma + 1)));
    return CudaTarget{*arch, "detected GPU " + name};
  }
  return std::nullopt;
}

Result<CudaTarget> ResolveCudaTarget(std::optional<std::string> arch_flag) {
  if (arch_flag) {
    auto arch = NormalizeCudaArch(*arch_flag);
    if (!arch.ok()) return arch.error();
    return CudaTarget{*arch, "--arch flag"};
  }
  SpawnOptions options;
  options.argv = {"nvidia-smi", "--query-gpu=compute_cap,name", "--format=csv,noheader"};
  options.environment = CudaToolEnvironment();
  auto run = RunCommand(options, kNvidiaSmiTimeout);
  if (run.ok() && run->succeeded()) {
    if (auto target = ParseNvidiaSmiQuery(run->output)) return *target;
  }
  return CudaTarget{kDefaultArch, "default (no GPU found)"};
}

// ------------------------------------------------------------------------------------ compiler

struct NvccCompiler::SandboxState {
  std::mutex mutex;
  std::optional<bool> works;  // guarded by mutex; unset until the first failed sandboxed build
};

NvccCompiler::NvccCompiler(NvccInfo info, fs::path cache_directory, BuildLimits limits)
    : info_(std::move(info)),
      cache_directory_(std::move(cache_directory)),
      limits_(limits),
      sandbox_(std::make_shared<SandboxState>()) {}

Result<NvccCompiler> NvccCompiler::Create(fs::path cache_directory, CudaTarget target, BuildLimits limits) {
  NvccInfo info;
  const char* configured = std::getenv("KSMITH_NVCC");
  if (configured != nullptr && *configured != '\0') {
    info.executable = configured;  // an explicit choice is never silently replaced
  } else if (auto found = FindOnPath(std::getenv("PATH"), "nvcc")) {
    info.executable = *found;
  } else {
    info.executable = kDefaultNvcc;
  }
  if (!IsExecutableFile(info.executable)) {
    return MakeError(ErrorKind::kNotFound,
                     "nvcc not found at {}: install the CUDA toolkit, put nvcc on PATH or set KSMITH_NVCC",
                     info.executable.string());
  }
  std::error_code error;
  info.executable = fs::canonical(info.executable, error);
  info.toolkit_root = info.executable.parent_path().parent_path();
  SpawnOptions options;
  options.argv = {info.executable.string(), "--version"};
  options.environment = CudaToolEnvironment();
  auto run = RunCommand(options, kToolTimeout);
  if (!run.ok()) return run.error();
  if (!run->succeeded()) {
    return MakeError(ErrorKind::kNotFound, "nvcc at {} does not run ({}); set KSMITH_NVCC to a working one",
                     info.executable.string(), run->Describe());
  }
  info.version_output = run->output;
  for (const auto& line : SplitLines(run->output)) {
    if (line.find("release") != std::string::npos) info.version = std::string(Trim(line));
  }
  if (info.version.empty()) info.version = "unknown";
  // nvcc names the folders it compiles with; the file need not exist for a dry run.
  options.argv = {info.executable.string(), "--dryrun", "-c", "ksmith_paths.cu"};
  auto dry_run = RunCommand(options, kToolTimeout);
  info.paths = ToolkitPathsOr(dry_run.ok() && dry_run->succeeded() ? ParseNvccDryRun(dry_run->output) : ToolkitPaths{},
                              info.toolkit_root);
  if (IsExecutableFile(info.toolkit_root / "bin" / "cuobjdump")) {
    info.cuobjdump = info.toolkit_root / "bin" / "cuobjdump";
  } else if (auto found = FindOnPath(std::getenv("PATH"), "cuobjdump")) {
    info.cuobjdump = *found;
  }
  info.target = std::move(target);
  info.flags = {"-std=c++17", "-O3", "-lineinfo", "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
                "-cudart", "shared", info.target.Gencode(), "-Xptxas", "-v",
                "-Xlinker", "--no-undefined,-z,now"};
  fs::create_directories(cache_directory / "cuda-objects", error);
  if (error) {
    return MakeError(ErrorKind::kIo, "cannot create {}: {}", (cache_directory / "cuda-objects").string(),
                     error.message());
  }
  return NvccCompiler(std::move(info), std::move(cache_directory), limits);
}

CudaEntryBinding BindCudaEntry(const Task& task, KernelRole role) {
  const bool is_reference = role == KernelRole::kReference;
  CudaEntryBinding binding_text;
  binding_text.declaration = is_reference ? task.CudaReferenceDeclaration() : task.CudaDeclaration();
  const std::string function = !is_reference ? task.signature.function
                               : task.cuda  ? task.cuda->reference_function
                                            : task.reference_function;
  std::string call;
  for (size_t i = 0; i < task.bindings.size(); ++i) {
    const auto& parameter = task.signature.parameters[i];
    const auto& binding = task.bindings[i];
    const std::string constness = parameter.is_const ? "const " : "";
    switch (binding.role) {
      case ParameterRole::kInput:
        call += fmt::format("static_cast<{}{}*>(pointers[{}]), ", constness,
                            DTypeCudaType(task.inputs[binding.index].dtype), i);
        break;
      case ParameterRole::kOutput:
        call += fmt::format("static_cast<{}*>(pointers[{}]), ",
                            is_reference ? "double" : DTypeCudaType(task.outputs[binding.index].dtype), i);
        break;
      case ParameterRole::kDim:
        call += fmt::format("static_cast<{}>(scalars[{}]), ", parameter.base_type, i);
        break;
    }
  }
  call += "static_cast<cudaStream_t>(stream)";
  binding_text.call = function + "(" + call + ")";
  return binding_text;
}

std::string NvccCompiler::WrapperSource(const Task& task, KernelRole role, const fs::path& kernel_path) {
  const CudaEntryBinding entry = BindCudaEntry(task, role);
  return fmt::format(
      "// Generated by ksmith ({}): binds the kernel to the CUDA worker's entry point.\n"
      "#include <cstddef>\n#include <cstdint>\n#include <cuda_runtime.h>\n"
      "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
      "#include \"{}\"\n"
      "#line 1 \"ksmith-expected-signature\"\n"
      "{};\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void ksmith_entry("
      "void* const* pointers, const int64_t* scalars, void* stream) {{\n"
      "  (void)pointers; (void)scalars;\n  {};\n}}\n",
      kWrapperVersion, kernel_path.string(), entry.declaration, entry.call);
}

Result<BuildOutput> NvccCompiler::Build(const Task& task, const BuildRequest& request) const {
  // The wrapper includes the kernel by its final path, known only inside Compile: a placeholder
  // keeps the key independent of the temporary folder.
  return Compile(request.source, request.display_name, WrapperSource(task, request.role, "@KERNEL@"),
                 request.libraries);
}

Result<BuildOutput> NvccCompiler::BuildStandalone(const std::string& source,
                                                      const std::string& display_name) const {
  return Compile(source, display_name, "#include \"@KERNEL@\"\n", {});
}

Result<BuildOutput> NvccCompiler::Compile(const std::string& kernel_source,
                                              const std::string& display_name,
                                              const std::string& wrapper,
                                              const std::vector<std::string>& libraries) const {
  Sha256Builder key;
  key.Add(kWrapperVersion).Add(wrapper).Add(kernel_source).Add(display_name);
  key.Add(info_.executable.string()).Add(info_.version_output).Add(info_.target.arch);
  for (const auto& flag : info_.flags) key.Add(flag);
  key.Add("libraries");
  for (const auto& library : libraries) key.Add(library);
  const std::string digest = key.HexDigest();
  const fs::path stored = cache_directory_ / "cuda-objects" / (digest + ".so");

  // The .so is stored last, so its presence means the log and the SASS beside it are complete.
  if (fs::exists(stored)) return CachedCudaBuild(stored, stored, info_.cuobjdump);

  auto output = RunNvcc(kernel_source, display_name, wrapper, libraries, /*sandboxed=*/true);
  if (!output.ok()) return output.error();
  // A failure under Landlock is the candidate's, unless nvcc cannot work walled in on this
  // machine at all; then build again in the open, and say so (sandboxed == false).
  if (!output->compiled && output->sandboxed && !SandboxWorks()) {
    output = RunNvcc(kernel_source, display_name, wrapper, libraries, /*sandboxed=*/false);
    if (!output.ok()) return output.error();
  }
  if (!output->compiled) return output;

  StoreCudaBuildRecord(stored, *output);
  std::error_code error;
  fs::rename(output->shared_object, stored, error);
  RemoveWorkFolder(output->shared_object.parent_path());
  if (error) {
    return MakeError(ErrorKind::kIo, "cannot store {}: {}", stored.string(), error.message());
  }
  output->shared_object = stored;
  output->pending_sass = ReadSassInBackground(info_.cuobjdump, stored, fs::path(stored).replace_extension(".sass"));
  return output;
}

Result<BuildOutput> NvccCompiler::RunNvcc(const std::string& kernel_source,
                                              const std::string& display_name,
                                              const std::string& wrapper_template,
                                              const std::vector<std::string>& libraries,
                                              bool sandboxed) const {
  // Not a ScopedTempDir: a successful build's folder outlives this call (the object is moved
  // into the cache by Compile, which removes the folder).
  const fs::path parent = cache_directory_ / "tmp";
  std::error_code error;
  fs::create_directories(parent, error);
  std::string pattern = (parent / "nvcc-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const std::string cause = error ? error.message() : std::strerror(errno);
    return MakeError(ErrorKind::kIo, "the build's temporary folder: cannot create a folder under {}: {}; the cache "
                     "directory {} must be writable (or set KSMITH_CACHE_DIR to a folder you can write)",
                     parent.string(), cause, cache_directory_.string());
  }
  const fs::path work = pattern;
  // Marked with this process: a build killed mid-way leaves the folder, which a later run removes
  // (RemoveStaleBuildFolders).
  MarkWorkFolder(work);
  struct Cleanup {
    fs::path path;
    bool keep = false;
    ~Cleanup() {
      if (!keep) RemoveWorkFolder(path);
    }
  } cleanup{work};

  // The kernel sits in its own folder under its bare name: no name can clash with the wrapper
  // or point outside the build folder.
  const fs::path kernel_path = work / "src" / fs::path(display_name).filename();
  fs::create_directories(kernel_path.parent_path(), error);
  const fs::path wrapper_path = work / "ksmith_wrapper.cu";
  const fs::path object_path = work / "kernel.so";
  std::string wrapper = wrapper_template;
  wrapper.replace(wrapper.find("@KERNEL@"), 8, kernel_path.string());
  if (auto status = WriteFileAtomic(kernel_path, kernel_source); !status.ok()) return status.error();
  if (auto status = WriteFileAtomic(wrapper_path, wrapper); !status.ok()) return status.error();

  BuildOutput output;
  SpawnOptions options;
  options.argv = {info_.executable.string()};
  options.argv.insert(options.argv.end(), info_.flags.begin(), info_.flags.end());
  options.argv.insert(options.argv.end(), {"-o", object_path.string(), wrapper_path.string()});
  for (const auto& library : libraries) options.argv.push_back("-l" + library);
  options.environment = CudaToolEnvironment();
  // nvcc's intermediate files (cudafe, cicc, ptxas, fatbinary outputs) stay in the build folder.
  options.environment.push_back("TMPDIR=" + work.string());
  options.working_directory = work;
  for (const auto& arg : options.argv) output.command += (output.command.empty() ? "" : " ") + arg;

  // nvcc reads the candidate's text, so it runs walled in like the CPU compiler: the system's
  // headers and tools, the toolkit, and its own folder, and nothing else (no task files, no
  // keys), so that an include cannot pull a secret into the build log.
  std::optional<LandlockRuleset> ruleset =
      sandboxed ? CudaBuildRuleset(info_.toolkit_root, info_.paths, work, {}) : std::nullopt;
  if (ruleset) options.landlock_ruleset_fd = ruleset->fd();
  output.sandboxed = ruleset.has_value();

  // Each of nvcc's tools (cudafe++, cicc, ptxas, the host compiler) is held to the limits.
  options.limits = limits_.ForChild(/*address_space=*/true);
  auto run = RunBuildCommand(options, limits_, kCompileTimeout, work, "nvcc");
  if (!run.ok()) return run.error();
  output.compile_s = run->exit.elapsed_s;
  output.log = std::move(run->exit.output);
  output.limit_hit = run->limit_hit;
  output.resources = ParsePtxasInfo(output.log);
  if (!run->exit.succeeded()) return output;
  if (!fs::exists(object_path)) return output;
  output.compiled = true;
  output.shared_object = object_path;
  cleanup.keep = true;
  return output;
}

bool NvccCompiler::SandboxWorks() const {
  std::lock_guard lock(sandbox_->mutex);
  if (!sandbox_->works) {
    auto probe = RunNvcc(kSandboxProbe, "ksmith_probe.cu", "#include \"@KERNEL@\"\n", {}, true);
    sandbox_->works = probe.ok() && probe->compiled;
    if (probe.ok() && probe->compiled) {
      RemoveWorkFolder(probe->shared_object.parent_path());
    }
  }
  return *sandbox_->works;
}

}  // namespace ksmith
