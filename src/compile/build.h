// What every backend's compiler takes and gives: a kernel source to build in a role, and the
// shared object it became (or the log of why not). One type for every backend, so that the
// pipeline driver records a build the same way whatever compiled it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/kernel_resources.h"
#include "binary/vector_code.h"
#include "core/subprocess.h"

namespace ksmith {

/// What one build may use. Each process of a build (the compiler's driver, cc1plus, cicc, ptxas;
/// in a KernelBench build sandbox also python and ninja) is held to these on its own, and a build
/// sandbox's processes to the memory limit together: a compiler that runs away is stopped there,
/// and its verdict names the limit. The defaults never stop an
/// honest build (docs/benchmarks.md, "Build limits"): the largest measured, nvcc's cicc over
/// torch's headers, peaked at 3.0 GiB and 53 s of CPU for the whole nvcc.
struct BuildLimits {
  uint64_t memory_bytes = uint64_t{8} << 30;  // RLIMIT_DATA of each process [bytes]
  double cpu_s = 120;                          // RLIMIT_CPU of each process [s]

  /// The rlimits of each process: the data segment, the stack, and with `address_space` the whole
  /// address space too (what a compiler maps, its stack included; not for a process that starts
  /// the CUDA runtime, which reserves address space far beyond any such limit), and the CPU time.
  ChildLimits ForChild(bool address_space) const;
  /// A build's wall-clock limit: the compiler's own (`at_least`), or longer where the CPU limit
  /// is, so that a build sharing its core with others is stopped by its CPU time first.
  std::chrono::milliseconds WallTimeout(std::chrono::seconds at_least) const;
};

/// Which limit stopped a build, and the reason a verdict gives.
struct BuildLimitHit {
  std::string limit;   // "memory", "cpu_time" or "wall_time"
  double value = 0;    // the limit: bytes for memory, seconds for the times
  std::string reason;  // "the compiler exceeded the build's memory limit of 8 GiB"

  nlohmann::json ToJson() const { return {{"limit", limit}, {"value", value}, {"reason", reason}}; }
};

/// Which limit stopped a build that did not succeed, from what the kernel accounted to its
/// processes: its CPU time (a process that hit RLIMIT_CPU ended by SIGXCPU, which the compiler's
/// driver reports) and its largest resident set (one at the data limit cannot allocate more).
/// nullopt when none did: the compiler failed on its own. `compiler` names it in the reason.
std::optional<BuildLimitHit> FindBuildLimitHit(const ProcessExit& exit, const BuildLimits& limits,
                                               std::chrono::milliseconds wall_timeout, const std::string& compiler);

/// Removes what builds and evaluations killed mid-way left in the cache: the folders under
/// `cache_directory`/tmp (the compilers' work folders) and /scratch (the workers') whose owner is
/// gone, and unmarked ones past kStaleWorkFolderAge (core/work_folders.h). A backend calls it once
/// as it is made, before its first build; folders of running processes are never touched.
void RemoveStaleBuildFolders(const std::filesystem::path& cache_directory);

/// "8 GiB", "512 MiB".
std::string FormatMemory(uint64_t bytes);

/// The compile pool's memory slots are half a build's memory limit each: a build of one process
/// takes two, a KernelBench build sandbox three or four (kernelbench/build_sandbox.h).
inline constexpr size_t kMemorySlotsPerBuild = 2;

/// How many memory slots (half limits) fit in `machine_bytes` at once: three quarters of it, the
/// rest left to the evaluator, its workers and the system; at least one build's.
size_t BuildMemorySlots(const BuildLimits& limits, uint64_t machine_bytes);

/// This machine's physical memory [bytes].
uint64_t PhysicalMemoryBytes();

enum class KernelRole { kCandidate, kBaseline, kReference };

struct BuildRequest {
  std::string source;             // the kernel's text
  std::string display_name;       // file name shown in compiler messages, e.g. "candidate.cpp"
  KernelRole role = KernelRole::kCandidate;
  std::vector<std::string> libraries;  // -l<name>
};

struct BuildOutput {
  bool compiled = false;
  bool cache_hit = false;
  std::filesystem::path shared_object;
  /// An NVRTC-form CUDA build's cubin, beside `shared_object` (backends/cuda/nvrtc_form.h): the
  /// device code the CUDA worker loads for it. Empty where the device code is in the library.
  std::filesystem::path device_code;
  std::string log;            // the compiler's output, untrimmed
  std::string command;        // what was run, for provenance
  double compile_s = 0;       // [seconds], 0 on a cache hit
  bool sandboxed = false;     // the compiler ran under Landlock (reads only system files)
  /// What the device compiler reported per kernel (ptxas); empty where it reports nothing.
  std::vector<KernelResources> resources;
  /// The machine code's summary (cuobjdump); empty where there is none. Reading it takes about
  /// a second (cuobjdump on an H200's host, for a one-kernel object) and decides nothing, so a
  /// fresh build computes it beside verification: `pending_sass` is then valid and `sass` empty
  /// until FinalSass() is asked.
  SassSummary sass;
  std::shared_future<SassSummary> pending_sass;
  /// A CPU object's vector arithmetic (objdump); unset on the GPU.
  std::optional<VectorCode> vector_code;
  /// A KernelBench-format candidate's build sandbox (kernelbench/candidate_build.h); null otherwise.
  nlohmann::json build_sandbox;
  /// The limit that stopped a build that failed (BuildLimits); unset when the compiler failed on
  /// its own, or succeeded.
  std::optional<BuildLimitHit> limit_hit;

  /// The summary, waiting for it if it is still being read.
  SassSummary FinalSass() const { return pending_sass.valid() ? pending_sass.get() : sass; }

  nlohmann::json ToJson() const;
};

struct CompilerInfo {
  std::string executable;  // "g++"
  std::string version;     // first line of --version
  std::vector<std::string> flags;
};

}  // namespace ksmith
