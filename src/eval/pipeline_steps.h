// Steps that the CPU and the CUDA pipelines take alike, each recording into the verdict: the
// source audit, what a failed audit or compile says, and what a failed worker means.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binary/elf_symbols.h"
#include "core/result.h"
#include "eval/audit.h"
#include "eval/backend.h"
#include "eval/cases.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "sandbox/supervisor.h"
#include "task/task.h"

namespace ksmith {

/// The secret seed of one evaluation: `options.fixed_seed` when the user fixed it, else random.
uint64_t EvaluationSeed(const EvalOptions& options);

/// Provenance both backends record: version, the seed's hash (it matches two verdicts to one seed
/// without revealing it), whether the user fixed it, the task file and the candidate's hash.
nlohmann::json CommonProvenance(const EvalOptions& options, uint64_t secret_seed, const Task& task,
                                const CandidateSource& candidate);

/// Fails `stage` with integrity_violation, listing the findings; returns false.
bool FinishAuditFailure(VerdictRecorder& recorder, StageRecord& stage,
                        const std::vector<AuditFinding>& findings, const std::string& what);

/// The "audit" stage: a source that cannot be compiled at all (empty, too big, not text) is a
/// compile_error of a "build" stage; otherwise `audit` judges it. Returns whether to go on.
bool AuditCandidateSource(VerdictRecorder& recorder, const CandidateSource& candidate,
                          const std::function<std::vector<AuditFinding>()>& audit);

/// Fails the build `stage` for a compiler that rejected the candidate: an integrity_violation when
/// the log shows a forbidden read or link (AuditBuildLog), else a compile_error whose log ends
/// with the declaration the candidate must define. Returns false.
bool FinishCompileFailure(VerdictRecorder& recorder, StageRecord& stage, const std::string& log,
                          const Task& task, const std::string& expected_declaration,
                          const std::string& compiler_name);

/// Why a candidate that changed process-wide state fails: each change, and that the worker undid it
/// before the baseline ran.
std::string ProcessStateReason(const std::vector<std::string>& changes);

/// The label a KernelBench candidate earns from its shim's count (the worker's "custom_code": calls,
/// calls_without_custom_code) of model calls that ran none of its own compiled code (an extension,
/// a Triton kernel): "no custom kernel" when none did, "custom kernel in some calls only" for a
/// fallback taken at times; empty when every call ran its own code or nothing was counted.
std::string CustomCodeLabel(const nlohmann::json& custom_code);

/// What CUPTI saw a KernelBench candidate's checked runs launch (the CUDA worker attributes each
/// kernel to the library whose code launched it): runs counted, runs in which none of the kernels
/// came from the candidate's own code, and kernels by launching library.
struct LaunchedKernels {
  int64_t runs = 0;
  int64_t runs_without_own_kernel = 0;
  std::map<std::string, int64_t> by_library;
  // The kernels' GPU time [ns] over the counted runs, and the part of it spent in kernels the
  // candidate's own code launched (the reward service's share, Dr.Kernel's "time coverage").
  int64_t device_ns = 0;
  int64_t own_device_ns = 0;

  /// Adds one run's worker reply ("own_kernels", "launched_by", "device_ns", "own_device_ns"); a
  /// reply without the first two is skipped.
  void Add(const nlohmann::json& run_reply);
  /// The share of the counted runs' kernel time spent in the candidate's own kernels; unset when
  /// nothing was counted or no kernel time was seen.
  std::optional<KernelTimeShare> TimeShare() const;
};

/// "no custom kernel" when no checked run launched a kernel from the candidate's own code,
/// "custom kernel in some calls only" when some did not; each naming where the kernels came from.
/// Empty when every run launched its own, or none was attributed.
std::string LaunchedKernelsLabel(const LaunchedKernels& launched);

/// The labels a KernelBench-format candidate's state report (the workers' "state" reply) gives
/// the verdict: CustomCodeLabel's, and its changes of settings that only its own calls read while
/// set ("restored": cuDNN and TF32 flags, the default dtype, build-only environment variables),
/// each undone after it, reported and not failed.
std::vector<std::string> StateReportLabels(const nlohmann::json& state_reply);

/// The exception a KernelBench-format candidate's Python raised, as the last "Name: message" line
/// of the worker's output names it (the runner's module prefix dropped); empty where none.
std::string RaisedPythonException(std::string_view output);

/// Fails `stage` for a worker that failed a request: timeout, crash or exit (runtime_error), a
/// forged reply or a call the sandbox denied the candidate (integrity_violation), or ksmith's own
/// trouble (infra_error). `running` is the case the request ran, when it ran one. Returns false.
bool FinishWorkerFailure(VerdictRecorder& recorder, StageRecord& stage, const WorkerProcess& worker,
                         std::optional<CaseRef> running = std::nullopt);

/// Fails `stage` for an exception a KernelBench-format candidate's Python raised, as a worker's
/// reply carries it ("candidate_raised": {"at", "message"}, binary/shared_library.h); the worker
/// is still running. compile_error where it was raised building ModelNew (importing the candidate,
/// constructing it, binding Model's parameters: KernelBench's "compiled: false"), runtime_error in
/// a call. `at` is the case the request ran; `output` the worker's log (the traceback). Returns false.
bool FinishCandidateRaised(VerdictRecorder& recorder, StageRecord& stage, const nlohmann::json& raised,
                           std::optional<CaseRef> at, const std::string& output);

/// The case `spec` of `task`, in parts, as a verdict records it.
CaseRef CaseRefFor(const Task& task, const CaseSpec& spec);

/// Fails `stage` for what CheckSnapshot found at `spec`: wrong_output, or integrity_violation for
/// a modified input, a written guard zone, a snapshot of the wrong size, or an output that became
/// wrong after timing (`after_timing`). Records the case and the output's mismatch numbers.
/// `wrong_output_suffix` ends a wrong output's reason. Returns false.
bool FinishCaseProblem(VerdictRecorder& recorder, StageRecord& stage, const Task& task, const CaseSpec& spec,
                       const CaseCheck& check, bool after_timing, const std::string& wrong_output_suffix = "");

/// The trusted sources of `task` for `traits`'s backend: the reference at `reference_source`
/// and the task's [baseline.<backend>], read and ready to build. kInvalidArgument when the task
/// has no baseline for the backend; the file's error when one cannot be read.
Result<std::pair<BuildRequest, BuildRequest>> ReadTrustedSources(const Task& task, const BackendTraits& traits,
                                                                 const std::filesystem::path& reference_source);

/// Ends a verification that passed every stage: the status, and a reason that gives the number
/// of cases and the speedup when timed.
void MarkPassed(Verdict& verdict, size_t cases);

/// Runs a KernelBench candidate's hidden-shape cases (after every check that decides) as a
/// property: the first that `run_case` fails is recorded in verdict.extensions.generalization, and the
/// verdict's status and reason are put back as they were; `stage` stays "ok". An infra error
/// leaves "generalizes" unknown, never "no".
void CheckHiddenShapes(VerdictRecorder& recorder, StageRecord& stage, const std::vector<CaseSpec>& cases,
                       const std::function<bool(const CaseSpec&)>& run_case);

/// The binary audit every backend shares: the shared object's imports, judged by
/// `audit_symbols` (each backend has its own contract), and its forbidden instructions.
Result<std::vector<AuditFinding>> AuditBuiltObject(
    const std::filesystem::path& shared_object,
    const std::function<std::vector<AuditFinding>(const DynamicSymbols&)>& audit_symbols);

}  // namespace ksmith
