// Builds NVRTC-form CUDA candidates (backends/cuda/nvrtc_form.h) into shared objects the CUDA
// worker loads like an nvcc-built one, in a few hundred milliseconds instead of seconds.
//
// Two compilers run at once, each walled in like nvcc (Landlock: the system's and the toolkit's
// files, its own folder) and held to the build's limits: ksmith-nvrtc compiles the KSMITH_DEVICE
// part to a cubin for the target GPU with its kernel table, while g++ compiles the KSMITH_HOST
// part inside the generated wrapper (the expected signature, ksmith_entry) and links it with
// ksmith's launcher object (compiled once, apart from any candidate's code). ptxas's report
// (-Xptxas -v) gives the resources; cuobjdump reads the SASS from the stored cubin. The cache is
// <cache>/cuda-objects/<sha256>.{so,cubin,kernels,log,json,sass}; the .so is written last.
//
// Thread-safe: Build may run concurrently.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/nvcc_compiler.h"
#include "compile/build.h"
#include "core/landlock.h"
#include "core/result.h"
#include "core/subprocess.h"
#include "task/task.h"

namespace ksmith {

struct NvrtcInfo {
  std::filesystem::path executable;     // ksmith-nvrtc
  std::string version;                  // "NVRTC 13.0"
  std::filesystem::path host_compiler;  // g++
  std::string host_version;             // its first line of --version
  std::filesystem::path toolkit_root;
  ToolkitPaths paths;                   // nvcc's headers and libraries
  std::string toolkit_version;          // all of `nvcc --version`: a toolkit update is a new build
  std::filesystem::path cuobjdump;      // empty: no SASS summary
  std::vector<std::string> device_options;  // NVRTC's, without the include folders
  std::vector<std::string> host_flags;      // g++'s for the host object
  CudaTarget target;
};

/// $KSMITH_NVRTC, else ksmith-nvrtc beside this executable.
std::filesystem::path DefaultNvrtcExecutable();

class NvrtcCompiler {
 public:
  /// Uses the toolkit, cuobjdump and target nvcc found. kNotFound when ksmith-nvrtc or g++ does
  /// not run (ksmith was configured without the CUDA toolkit, or KSMITH_NVRTC is wrong).
  static Result<NvrtcCompiler> Create(std::filesystem::path cache_directory, const NvccInfo& nvcc,
                                      BuildLimits limits = {});

  /// Compile failures (either compiler's, or a launch the scan cannot read) are a BuildOutput
  /// with compiled == false and the reason in its log; an Error means a compiler could not run.
  /// Candidates only: the trusted references and baselines stay with nvcc.
  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  const NvrtcInfo& info() const { return info_; }

 private:
  NvrtcCompiler(NvrtcInfo info, std::filesystem::path cache_directory, BuildLimits limits);

  /// The compilers' and the linker's command lines for a build in `work`.
  struct Commands {
    std::vector<std::string> device;
    std::vector<std::string> host;
    std::vector<std::string> link;  // host.o with `launcher` (none: the probe's) and the libraries
  };
  /// One process of a build, limited, walled in where `walls` holds a ruleset.
  struct Step {
    SpawnOptions options;
    std::string name;  // "NVRTC", "the host compiler", "the linker": a limit's reason names it
  };
  /// Whether builds walled in can compile at all here (once per compiler, after the first failed
  /// walled build): ksmith's probe built walled in, else in the open. As NvccCompiler's.
  struct WallsState {
    std::mutex mutex;
    std::optional<bool> work;  // guarded by mutex
  };

  /// One build in the fresh folder `work`, linked with `launcher`; `walled` asks for Landlock.
  Result<BuildOutput> Run(const Task& task, const BuildRequest& request, const std::vector<std::string>& kernels,
                          const std::filesystem::path& launcher, const std::filesystem::path& work,
                          bool walled) const;
  Status WriteSources(const std::filesystem::path& work, const std::filesystem::path& kernel_path,
                      const std::string& kernel, const std::string& host) const;
  Commands CommandsFor(const std::filesystem::path& kernel_path, const std::filesystem::path& work,
                       const std::vector<std::string>& kernels, const std::filesystem::path& launcher,
                       const std::vector<std::string>& libraries) const;
  std::optional<LandlockRuleset> Walls(const std::filesystem::path& work, const std::filesystem::path& launcher) const;
  Step MakeStep(std::vector<std::string> argv, std::string name, const std::filesystem::path& work,
                const std::optional<LandlockRuleset>& walls) const;
  bool WallsWork(const std::filesystem::path& launcher) const;
  /// ksmith's launcher object (NvrtcLauncherSource), compiled once per host compiler and cached.
  Result<std::filesystem::path> LauncherObject() const;

  NvrtcInfo info_;
  std::filesystem::path cache_directory_;
  BuildLimits limits_;
  std::shared_ptr<WallsState> walls_ = std::make_shared<WallsState>();
};

}  // namespace ksmith
