// The seam between the evaluation pipeline and a place where kernels run. One pipeline driver
// (eval/pipeline.h) owns the stage order, the secret seed, provenance, cancellation and what
// each failure means for the verdict; a backend supplies the parts that differ: the source and
// binary audits, its compiler, the task's trusted kernels, and a verification session on its
// device. CPU, CUDA and OpenCL are implementations in backends/<name>/, found by name in
// eval/backend_registry.h; callers never test which backend they hold.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/build.h"
#include "core/result.h"
#include "eval/audit.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// How a model is told about a backend (agent/prompt.cc): the backend's own words and facts, so
/// that the prompts name no backend. Each backend's folder writes its own (e.g. backends/cpu/cpu_prompt.cc).
struct BackendPrompt {
  std::string kernel_kind = "CPU (C++)";  // "an expert ... who writes fast, correct <kind> kernels"
  std::string device_noun = "machine";    // "the <noun> it runs on", "## The <noun>"
  std::string rules;                      // the source file's rules, one "- " paragraph each
  std::string declaration_note;           // said after the declaration to define; may be empty
  std::string half_types;                 // how fp16 and bf16 are spelled, for tasks that have them
  std::string parallel_units = "cores";   // what a kernel keeps busy ("SMs", "compute units")
  std::string tile_memory = "cache";      // where a tile is reused ("shared-memory", "local-memory")
  /// The declaration the candidate defines, as the prompt shows it.
  std::function<std::string(const Task&)> declaration = [](const Task& task) { return task.signature.Declaration(); };
  /// The device's facts (the backend's DeviceFacts()) as "- " lines.
  std::function<std::string(const nlohmann::json&)> device_facts = [](const nlohmann::json&) { return std::string(); };
  /// The device's measured peaks from the same facts: {flop/s, bytes/s}, 0 where unknown.
  std::function<std::pair<double, double>(const nlohmann::json&)> peak_rates = [](const nlohmann::json&) {
    return std::pair{0.0, 0.0};
  };
  /// Whether a code block of a model's answer is a whole candidate, where that is not "defines
  /// the task's function with extern \"C\"" (the default, when empty); `candidate_description`
  /// says what it looks for.
  std::function<bool(std::string_view code)> is_candidate;
  std::string candidate_description;
  /// The shape the backend times the task at.
  std::function<DimValues(const Task&)> timed_shape = [](const Task& task) { return task.bench_shape; };
};

/// What callers may know of a backend without one running: names, file conventions, and
/// whether it needs a GPU.
struct BackendTraits {
  std::string name;              // "cpu": the --backend value, the task.toml key
  std::string description;       // one line for --help
  std::string source_extension;  // ".cc", ".cu": the best kernel's file
  std::string fence_language;    // "cpp", "cuda": the code fence a model is asked for
  std::string compiler_name;     // "the compiler", "nvcc": for messages
  /// Further extensions its candidates may carry without being told to change backend (cuda:
  /// C++ files, which the NVRTC form is).
  std::vector<std::string> other_source_extensions;
  bool profiles = false;         // Profile() reads hardware counters (`ksmith eval --profile`)
  /// Its compiler reports each kernel's resources (registers, shared memory, SASS) for `ksmith build`.
  bool reports_kernel_resources = false;
  /// The key under which a machine description names the device it verifies on ("gpu"); empty:
  /// the host's cores are its device.
  std::string device_key;
  /// Timing runs on the cores that compile: builds must not overlap a verification (the
  /// service then builds each candidate when its evaluation starts, not when it is queued).
  bool times_on_host_cores = false;
  /// Verifications one device runs at once unless the user says (`--jobs`): on a GPU, the
  /// checks of some overlap the timing of one, which takes the device alone.
  size_t default_verifications_per_device = 1;
  /// Whether the machine may have several of its devices to choose from (`--devices`).
  bool selects_devices = false;
  /// Where PyTorch runs a KernelBench `ModelNew` on this backend ("cpu", "cuda"); empty: this
  /// backend cannot judge one (it has no PyTorch device).
  std::string torch_device;
  BackendPrompt prompt;
};

/// A baseline timed beside the task's own where the candidate's format has one and it was asked
/// for (EvalOptions::format_options; eval/candidate_format.h's SecondBaselineBuild fills it:
/// KernelBench's is torch.compile of the problem's Model). Reported only, never part of the status.
struct SecondBaseline {
  std::filesystem::path library;  // its shared object; empty: none, and `note` says why where one was asked for
  std::string description;        // what the candidate was timed against, for the verdict
  std::string note;
  std::vector<std::filesystem::path> readable;  // what it loads besides its library
};

/// The task's own kernels a candidate is judged against, built by the backend's compiler.
struct TrustedBuild {
  std::filesystem::path reference;  // shared object of the reference (double precision)
  std::filesystem::path baseline;   // shared object of this backend's baseline
  SecondBaseline second;            // the format's, where asked for
};

/// The stages that need the candidate running on the backend's device: correctness,
/// determinism, idle check, timing, re-check and physical limit, as the backend declares them.
/// Destroying the session releases its workers and case memory.
class VerificationSession {
 public:
  virtual ~VerificationSession() = default;
  /// (optional) The task's trusted kernels are built, while the candidate may still compile:
  /// work that does not depend on the candidate (its inputs, the reference's answers, starting the
  /// baseline's runtime) can start.
  /// Called at most once, before Run.
  virtual void TrustedReady(const TrustedBuild& trusted) { (void)trusted; }
  /// Runs every stage in order into the verdict the session was opened with; sets the status
  /// (passed when all stages pass). Never throws for anything the candidate does.
  virtual void Run(const std::filesystem::path& candidate, const TrustedBuild& trusted) = 0;
};

class EvalBackend {
 public:
  virtual ~EvalBackend() = default;

  virtual const BackendTraits& traits() const = 0;
  /// An explained kInvalidArgument when this backend has no version of `task`.
  virtual Status Supports(const Task& task) const = 0;
  /// The task as this backend runs it (default: as it is; cuda: its GPU-sized shapes).
  virtual Task View(const Task& task) const { return task; }
  /// The declaration a candidate must define, quoted when it does not compile.
  virtual std::string Declaration(const Task& task) const = 0;

  /// The candidate contract, read from the source.
  virtual std::vector<AuditFinding> AuditSource(const std::string& text, const Task& task) const = 0;
  /// Compiles one kernel; thread-safe and cached by content. A kernel that does not compile is a
  /// BuildOutput with compiled == false; an Error means the compiler could not run at all.
  virtual Result<BuildOutput> Build(const Task& task, const BuildRequest& request) const = 0;
  /// The candidate contract, read from the built binary (imports, forbidden instructions).
  virtual Result<std::vector<AuditFinding>> AuditBinary(const BuildOutput& build, const Task& task) const = 0;
  /// The reference and this backend's baseline, ready for Build.
  virtual Result<std::pair<BuildRequest, BuildRequest>> TrustedSources(const Task& task) const = 0;

  /// Where this backend caches what it builds; a KernelBench-format candidate's build sandbox
  /// keeps its builds there too. Empty: it keeps none (such candidates are then refused).
  virtual std::filesystem::path CacheDirectory() const { return {}; }
  /// (optional) The limits its builds run under, a KernelBench-format candidate's build sandbox
  /// included. Default: BuildLimits' defaults.
  virtual BuildLimits Limits() const { return {}; }

  /// The toolchain and machine, added to the verdict's provenance.
  virtual nlohmann::json Provenance() const = 0;
  /// The device's facts for prompts and reports; may wait for a first measurement.
  virtual nlohmann::json DeviceFacts() const = 0;

  /// (optional) Profiles a candidate that passed, adding a "profile" stage that never changes
  /// the status. Default: a stage saying this backend has no profiler.
  virtual void Profile(Verdict& verdict, const Task& view) const;

  /// A session for one evaluation of `view` (a task from View). It may start its workers at
  /// once, so that their start-up overlaps the build. `options` and `verdict` outlive it.
  virtual std::unique_ptr<VerificationSession> OpenSession(const Task& view, const EvalOptions& options,
                                                           Verdict& verdict, uint64_t secret_seed) const = 0;
};

}  // namespace ksmith
