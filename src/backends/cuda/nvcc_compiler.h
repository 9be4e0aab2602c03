// Builds CUDA C++ kernels into shared objects with nvcc, cached by content hash.
//
// Mirrors the CPU compiler (backends/cpu/compiler.h): the kernel is compiled inside a generated
// wrapper that includes it, re-declares the expected CUDA signature (a mismatch is a compile
// error naming both) and exports `ksmith_entry(pointers, scalars, stream)`, the one symbol the
// CUDA worker calls. Everything else is hidden. Each build also reports what ptxas said about
// every kernel (registers, spills, shared memory) and a summary of the SASS cuobjdump reads.
// The cache is <cache>/cuda-objects/<sha256>.{so,log,sass,json}; the .so is written last.
//
// Thread-safe: Build and BuildStandalone may run concurrently (see build_pool.h).
#pragma once

#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cuda/cuda_resources.h"
#include "backends/cuda/toolkit_paths.h"
#include "compile/build.h"
#include "core/landlock.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// The GPU architecture candidates are compiled for, and how it was chosen.
struct CudaTarget {
  std::string arch;    // "sm_90a"
  std::string origin;  // "--arch flag" | "detected GPU <name>" | "default (no GPU found)"

  /// "-gencode=arch=compute_90a,code=sm_90a": real machine code only, no PTX for the driver to
  /// JIT, so that what ptxas reported is what runs.
  std::string Gencode() const;
  nlohmann::json ToJson() const;
};

/// "sm_90a", "sm_80" or "90a" → "sm_90a". Anything else ("compute_90", "hopper", "9.0") is
/// kInvalidArgument with a message that shows the accepted spellings.
Result<std::string> NormalizeCudaArch(std::string_view flag);

/// A compute capability as nvidia-smi prints it ("9.0") → the arch to build for: the
/// arch-specific variant on Hopper and Blackwell (9.0 → sm_90a, 10.0 → sm_100a, 12.0 → sm_120a,
/// so that wgmma / tcgen05 are available), else sm_XY.
Result<std::string> ArchForComputeCapability(std::string_view capability);

/// The first GPU in `nvidia-smi --query-gpu=compute_cap,name --format=csv,noheader` output, or
/// nullopt when there is none (no driver prints an error instead of CSV).
std::optional<CudaTarget> ParseNvidiaSmiQuery(std::string_view output);

/// The --arch flag when given; else the first GPU nvidia-smi reports; else sm_90a. Works with
/// no GPU and no nvidia-smi (compile-only machines). Fails only on a malformed flag.
Result<CudaTarget> ResolveCudaTarget(std::optional<std::string> arch_flag);

/// How ksmith_entry calls a kernel of `role`: the declaration it expects (the task's signature,
/// or its CUDA reference's with double* outputs) and the call, from `pointers`, `scalars` and
/// `stream`, as both the nvcc and the NVRTC wrappers write it.
struct CudaEntryBinding {
  std::string declaration;  // "extern \"C\" void vector_add(..., cudaStream_t stream)"
  std::string call;         // "vector_add(static_cast<const float*>(pointers[0]), ...)"
};
CudaEntryBinding BindCudaEntry(const Task& task, KernelRole role);

/// What CUDA's build tools run with: PATH (nvcc finds its host compiler there) and LC_ALL=C.
std::vector<std::string> CudaToolEnvironment();

/// The walls of a CUDA build (nvcc's, NVRTC's and its host compiler's): the system's headers and
/// tools, the toolkit and the folders nvcc reads (`paths`, which may lie outside its root),
/// `executable` folders, and `work` writable; nothing else, so that an include cannot pull a
/// secret into the build log. nullopt where Landlock is unavailable.
std::optional<LandlockRuleset> CudaBuildRuleset(const std::filesystem::path& toolkit_root, const ToolkitPaths& paths,
                                                const std::filesystem::path& work,
                                                const std::vector<std::filesystem::path>& executable);

/// cuobjdump's summary of `object`'s SASS (a shared object or a cubin), read on a thread of its
/// own; the text is stored at `sass_path` for later cache hits.
std::shared_future<SassSummary> ReadSassInBackground(const std::filesystem::path& cuobjdump,
                                                     const std::filesystem::path& object,
                                                     const std::filesystem::path& sass_path);

/// A CUDA build stored in the cache, read back: `stored` is the library; its log (`.log`), how it
/// was built (`.json`: command, sandboxed) and its SASS text (`.sass`) sit beside it. Where the
/// SASS is not stored yet it is read from `sass_object` (the library, or an NVRTC build's cubin).
BuildOutput CachedCudaBuild(const std::filesystem::path& stored, const std::filesystem::path& sass_object,
                            const std::filesystem::path& cuobjdump);

/// Stores beside `stored` what CachedCudaBuild reads back: the log and how it was built. Written
/// before the library itself is moved to `stored`, whose presence means the rest is complete.
void StoreCudaBuildRecord(const std::filesystem::path& stored, const BuildOutput& output);

struct NvccInfo {
  std::filesystem::path executable;    // absolute path of nvcc
  std::filesystem::path toolkit_root;  // nvcc's ../.. resolved: "/usr/local/cuda-13.0"
  std::string version;                 // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string version_output;          // all of `nvcc --version`, part of the cache key
  std::filesystem::path cuobjdump;     // empty when the toolkit has none: no SASS summary
  ToolkitPaths paths;                  // the headers and libraries nvcc uses (its --dryrun)
  std::vector<std::string> flags;      // everything but the output, input and libraries
  CudaTarget target;
};

class NvccCompiler {
 public:
  /// Finds nvcc ($KSMITH_NVCC, else `nvcc` on $PATH, else /usr/local/cuda/bin/nvcc) and reads
  /// its version; kNotFound when none runs. Every build runs under `limits`.
  static Result<NvccCompiler> Create(std::filesystem::path cache_directory, CudaTarget target,
                                     BuildLimits limits = {});

  /// Compile failures are a BuildOutput with compiled == false; an Error means nvcc could
  /// not be run at all. A role of kReference binds the task's CUDA reference (double* outputs);
  /// kCandidate and kBaseline bind the task's signature.
  Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const;

  /// Builds a trusted, self-contained source (no wrapper, no entry point): probes and tools.
  Result<BuildOutput> BuildStandalone(const std::string& source, const std::string& display_name) const;

  const NvccInfo& info() const { return info_; }
  const BuildLimits& limits() const { return limits_; }

  /// The wrapper that binds `ksmith_entry` to the task's function (public for tests).
  static std::string WrapperSource(const Task& task, KernelRole role,
                                   const std::filesystem::path& kernel_path);

 private:
  struct SandboxState;

  NvccCompiler(NvccInfo info, std::filesystem::path cache_directory, BuildLimits limits);

  /// Compiles `wrapper` (which includes the kernel, written beside it) unless cached under its key.
  Result<BuildOutput> Compile(const std::string& kernel_source, const std::string& display_name,
                                  const std::string& wrapper,
                                  const std::vector<std::string>& libraries) const;
  /// One nvcc run in a fresh folder; `sandboxed` asks for Landlock.
  Result<BuildOutput> RunNvcc(const std::string& kernel_source, const std::string& display_name,
                                  const std::string& wrapper,
                                  const std::vector<std::string>& libraries, bool sandboxed) const;
  /// Whether nvcc works under Landlock here: compiles a known-good kernel once per compiler.
  bool SandboxWorks() const;

  NvccInfo info_;
  std::filesystem::path cache_directory_;
  BuildLimits limits_;
  std::shared_ptr<SandboxState> sandbox_;  // shared by copies, guarded by its own mutex
};

}  // namespace ksmith
